"""A gateway's /metrics as flat samples, and quantiles from its histograms."""

from __future__ import annotations

from telemetry_conformance import scrape_metrics


def metrics(port: int) -> dict[str, float]:
    """Unlabelled samples by name, labelled ones as name{k=v,...}."""
    samples = scrape_metrics(port) or {}
    return {name + ("{" + ",".join(f"{k}={v}" for k, v in labels) + "}" if labels else ""): value
            for (name, labels), value in samples.items()}


def quantile(samples: dict[str, float], name: str, q: float, since: dict[str, float] | None = None) -> float:
    """q-quantile from a Prometheus histogram's cumulative buckets (linear within the bucket); with since, of the
    observations made after that earlier scrape only (as Prometheus's histogram_quantile over an increase)."""
    since = since or {}
    buckets = sorted((float(k.split("le=")[1].rstrip("}")), v - since.get(k, 0.0)) for k, v in samples.items()
                     if k.startswith(name + "_bucket{"))
    total = buckets[-1][1]
    target, lower, below = q * total, 0.0, 0.0
    for upper, count in buckets:
        if count >= target:
            if upper == float("inf"):
                return lower
            return lower + (upper - lower) * (target - below) / max(count - below, 1e-9)
        lower, below = upper, count
    return lower
