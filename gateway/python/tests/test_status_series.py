"""The sparklines' series (status_series.py) against gateway/contract/vectors/status_series.jsonl and /healthz's
rule (healthz.py) against vectors/healthz.jsonl, which every gateway runs."""

import json
from pathlib import Path

import pytest

from telemetry_gateway.healthz import HealthLimits, HealthState, health
from telemetry_gateway.status_series import SeriesTally

VECTORS = Path(__file__).resolve().parents[2] / "contract" / "vectors"
SERIES_CASES = [json.loads(line) for line in (VECTORS / "status_series.jsonl").read_text("ascii").splitlines()]
HEALTH_CASES = [json.loads(line) for line in (VECTORS / "healthz.jsonl").read_text("ascii").splitlines()]


def _number(value):
    return float(value) if isinstance(value, str) else value  # "NaN", "Infinity", "-Infinity"


@pytest.mark.parametrize("case", SERIES_CASES, ids=[case["name"] for case in SERIES_CASES])
def test_status_series_vectors(case):
    p = case["params"]
    series = SeriesTally(p["series_per_source_max"], p["series_max"], p["bucket_ms"], p["buckets"])
    for step in case["steps"]:
        if "frame" in step:
            f = step["frame"]
            series.frame(f["source"], f["received_ms"], [(metric, _number(value)) for metric, value in f["values"]])
        elif "forget" in step:
            series.forget(step["forget"])
        else:
            got = {source: [{"metric": metric, "points": [list(point) for point in points]}
                            for metric, points in entries]
                   for source, entries in series.view(step["view"]).items()}
            assert got == step["expect"], f"view at {step['view']}"


def test_the_contract_bounds_are_the_defaults():
    series = SeriesTally()
    for n in range(600):  # more metrics than a source may have series, more sources than the bound in all
        series.frame(f"s{n // 9}", 1000, [(f"m{n % 9}", 1.0)])
    view = series.view(1000)
    assert max(len(entries) for entries in view.values()) == 8
    assert sum(len(entries) for entries in view.values()) == 512


@pytest.mark.parametrize("case", HEALTH_CASES, ids=[case["name"] for case in HEALTH_CASES])
def test_healthz_vectors(case):
    s, p = case["state"], case["params"]
    state = HealthState(s["now_ms"], s["started_ms"], s["cassandra_down_since_ms"], s["oldest_unsent_ms"],
                        s["newest_frame_ms"])
    assert health(state, HealthLimits(p["cassandra_down_ms"], p["spool_lag_ms"], p["silent_ms"])) == \
        (case["status"], case["reason"])
