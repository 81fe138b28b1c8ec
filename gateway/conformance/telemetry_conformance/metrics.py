"""A gateway's Prometheus samples, read over HTTP as any scraper would."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def scrape_metrics(port: int) -> dict[tuple[str, tuple], float] | None:
    """A gateway's Prometheus samples as {(name, sorted labels): value}; None while the endpoint does not answer."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
            text = response.read().decode()
    except OSError:
        return None
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}
