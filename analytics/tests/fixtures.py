"""Fixtures of the analytics suite (imported by the test modules; a conftest.py here would clash with the root one): a migrated keyspace per module, the loader, and `submit` running the real
analytics/submit (spark-submit, local[2] unless a test says otherwise) against the test node."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest

ANALYTICS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ANALYTICS))          # telemetry_analytics
sys.path.insert(0, str(Path(__file__).parent))  # reference

from conftest import migrate  # noqa: E402  (the root conftest: HOST and the schema runner)

from telemetry_analytics.loader import CassandraLoader  # noqa: E402

SUBMIT = ANALYTICS / "submit"
UTC = timezone.utc


@pytest.fixture(scope="module")
def keyspace(cql):
    name = f"analytics_{uuid.uuid4().hex[:10]}"
    done = migrate("--keyspace", name)
    assert done.returncode == 0, done.stdout + done.stderr
    yield name
    cql.execute(f"DROP KEYSPACE IF EXISTS {name}", timeout=120)


@pytest.fixture(scope="module")
def loader(cql, keyspace):
    return CassandraLoader(cql, keyspace)


def submit_job(host: str, keyspace: str, job: str, *args: str, master: str = "local[2]", check: bool = True,
               timeout: float = 300) -> subprocess.CompletedProcess:
    """Runs `analytics/submit [--master M] JOB ARGS` against host and keyspace; returns the CompletedProcess
    (spark-submit merges the job's stdout and stderr into stdout) and fails the test with the output on a non-zero
    exit. Also for other suites (gateway/conformance/test_day_marks_spark.py)."""
    env = {**os.environ, "TELEMETRY_CASSANDRA_HOSTS": host, "TELEMETRY_CASSANDRA_KEYSPACE": keyspace}
    done = subprocess.run([str(SUBMIT), "--master", master, job, *args], capture_output=True, text=True, env=env,
                          timeout=timeout)
    if check:
        assert done.returncode == 0, f"{job} {args} failed:\n{done.stdout}\n{done.stderr[-6000:]}"
    return done


@pytest.fixture(scope="module")
def submit(cassandra_node, keyspace):
    """submit_job against the test node and the module's keyspace: run(job, *args, master=, check=, timeout=)."""

    def run(job: str, *args: str, **options):
        return submit_job(cassandra_node, keyspace, job, *args, **options)

    return run


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


def ms(y, mo, d, h=0, mi=0):
    return int(datetime(y, mo, d, h, mi, tzinfo=UTC).timestamp() * 1000)


def thinned(readings, seed):
    """Drop a few frames at random so gaps differ per day and metric."""
    rng = random.Random(seed)
    return [r for r in readings if rng.random() > 0.03]


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
