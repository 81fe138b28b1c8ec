"""Fixtures of the analytics suite (imported by the test modules; a conftest.py here would clash with the root one): a migrated keyspace per module, the loader, and `submit` running the real
analytics/submit (spark-submit, local[2] unless a test says otherwise) against the test node."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ANALYTICS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ANALYTICS))          # telemetry_analytics
sys.path.insert(0, str(Path(__file__).parent))  # reference

from conftest import migrate  # noqa: E402  (the root conftest: HOST and the schema runner)

from telemetry_analytics.loader import CassandraLoader  # noqa: E402

SUBMIT = ANALYTICS / "submit"


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


@pytest.fixture(scope="module")
def submit(cassandra_node, keyspace):
    """Runs `analytics/submit [--master M] JOB ARGS` against the test node and keyspace; returns the
    CompletedProcess (spark-submit merges the job's stdout and stderr into stdout) and fails the test with the output on a non-zero exit."""

    def run(job: str, *args: str, master: str = "local[2]", check: bool = True, timeout: float = 300):
        env = {**os.environ, "TELEMETRY_CASSANDRA_HOSTS": cassandra_node, "TELEMETRY_CASSANDRA_KEYSPACE": keyspace}
        done = subprocess.run([str(SUBMIT), "--master", master, job, *args], capture_output=True, text=True,
                              env=env, timeout=timeout)
        if check:
            assert done.returncode == 0, f"{job} {args} failed:\n{done.stdout}\n{done.stderr[-6000:]}"
        return done

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
    from datetime import timezone
    return None if ts is None else round(ts.replace(tzinfo=timezone.utc).timestamp() * 1000)
