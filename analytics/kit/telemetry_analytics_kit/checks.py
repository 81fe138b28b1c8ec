"""Running an analytics job and checking its daily_summary rows against the reference computation: for the analytics
suite and the conformance suite's day-mark scenarios."""

from __future__ import annotations

import math
import os
import subprocess
from datetime import timezone
from pathlib import Path

SUBMIT = Path(__file__).resolve().parents[2] / "submit"  # analytics/submit of the checkout the kit is installed from


def submit_job(host: str, keyspace: str, job: str, *args: str, master: str = "local[2]", check: bool = True,
               timeout: float = 300) -> subprocess.CompletedProcess:
    """Runs `analytics/submit [--master M] JOB ARGS` against host and keyspace; returns the CompletedProcess
    (spark-submit merges the job's stdout and stderr into stdout) and fails the test with the output on a non-zero
    exit."""
    env = {**os.environ, "TELEMETRY_CASSANDRA_HOSTS": host, "TELEMETRY_CASSANDRA_KEYSPACE": keyspace}
    done = subprocess.run([str(SUBMIT), "--master", master, job, *args], capture_output=True, text=True, env=env,
                          timeout=timeout)
    if check:
        assert done.returncode == 0, f"{job} {args} failed:\n{done.stdout}\n{done.stderr[-6000:]}"
    return done


def summary_rows(cql, keyspace: str, tz: str) -> dict:
    """daily_summary of one zone as {(source, day, metric): row dict}, timestamps in epoch ms."""
    out = {}
    for r in cql.execute(f"SELECT * FROM {keyspace}.daily_summary"):
        if r.tz != tz:
            continue
        row = r._asdict()
        for k in ("min_ts", "max_ts", "first_ts", "last_ts", "computed_at"):
            row[k] = _ms(row[k])
        out[(r.source, r.day.date() if hasattr(r.day, "date") else r.day, r.metric)] = row
    return out


def _ms(ts):
    return None if ts is None else round(ts.replace(tzinfo=timezone.utc).timestamp() * 1000)


def assert_matches(actual: dict, expected: dict, keys=None):
    keys = set(expected) if keys is None else keys
    assert {k for k in actual if k in keys or keys is None} == set(keys)
    for key in keys:
        got, want = actual[key], expected[key]
        for field in ("count", "min", "min_ts", "max", "max_ts", "first_ts", "last_ts", "max_gap_ms"):
            assert got[field] == want[field], (key, field, got[field], want[field])
        assert math.isclose(got["mean"], want["mean"], rel_tol=1e-12, abs_tol=1e-12), key
        if want["stddev"] is None:
            assert got["stddev"] is None, key
        else:
            assert math.isclose(got["stddev"], want["stddev"], rel_tol=1e-9), key
