"""The /metrics exposition after given uses (gateway/contract/vectors/metric_samples.jsonl): each case's families
expose exactly its expected samples (names, labels, values; le as written), and every other family of metrics.json
is as a new gateway exposes it: a family without labels one sample per series at 0, a family with labels none."""

import json
from pathlib import Path

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from telemetry_gateway.metrics import FAMILIES, Metrics

VECTORS = [json.loads(line) for line in
           (Path(__file__).resolve().parents[2] / "contract" / "vectors" / "metric_samples.jsonl").read_text().splitlines()]


def by_family(metrics: Metrics) -> dict:
    """{contract family name: its metric object}, found from what each object declares."""
    found = {}
    for name, metric in vars(metrics).items():
        if name != "registry":
            declared = next(iter(metric.describe()))
            found[declared.name + ("_total" if declared.type == "counter" else "")] = metric
    return found


def family_of(sample: str) -> str:
    if sample in FAMILIES:
        return sample
    base = sample.rsplit("_", 1)[0]
    assert FAMILIES[base]["type"] == "histogram" and sample.rsplit("_", 1)[1] in ("bucket", "count", "sum"), sample
    return base


def exposed(metrics: Metrics) -> dict:
    """{family: [[sample, labels, value]]} as the exposition text reads, in its order."""
    samples = {}
    for family in text_string_to_metric_families(generate_latest(metrics.registry).decode()):
        for s in family.samples:
            samples.setdefault(family_of(s.name), []).append([s.name, s.labels, s.value])
    return samples


def ordered(samples: list) -> list:
    """The exposition's order is not the contract's: by name, then labels."""
    return sorted(samples, key=lambda sample: (sample[0], sorted(sample[1].items())))


@pytest.mark.parametrize("case", VECTORS, ids=lambda c: c["name"])
def test_metric_samples(case):
    metrics = Metrics()
    families = by_family(metrics)
    for use in case["uses"]:
        metric = families[use["family"]]
        metric = metric.labels(**use["labels"]) if use["labels"] else metric
        if "inc" in use:
            metric.inc(use["inc"])
        elif "set" in use:
            metric.set(use["set"])
        else:
            metric.observe(use["observe"], *([use["count"]] if "count" in use else []))
    got = exposed(metrics)
    for name, family in FAMILIES.items():
        if name in case["expect"]:
            assert ordered(got.get(name, [])) == ordered(case["expect"][name]), name
        elif family["labels"]:
            assert name not in got, name
        else:
            assert got[name] and all(value == 0 for _, _, value in got[name]), name
