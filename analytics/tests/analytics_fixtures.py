"""Fixtures of the analytics suite, imported by the test modules that use them (a conftest.py here would shadow the
root one's helpers, which modules import as `conftest`): a migrated keyspace per module, the loader, and `submit`
running the real analytics/submit (spark-submit, local[2] unless a test says otherwise) against the test node; and
the suite's small helpers for generated readings."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timezone

import pytest
from telemetry_analytics_kit.checks import submit_job
from telemetry_analytics_kit.loader import CassandraLoader

from conftest import migrate  # the root conftest: the schema runner

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


@pytest.fixture(scope="module")
def submit(cassandra_node, keyspace):
    """submit_job against the test node and the module's keyspace: run(job, *args, master=, check=, timeout=)."""

    def run(job: str, *args: str, **options):
        return submit_job(cassandra_node, keyspace, job, *args, **options)

    return run


def ms(y, mo, d, h=0, mi=0):
    return int(datetime(y, mo, d, h, mi, tzinfo=UTC).timestamp() * 1000)


def thinned(readings, seed):
    """Drop a few frames at random so gaps differ per day and metric."""
    rng = random.Random(seed)
    return [r for r in readings if rng.random() > 0.03]
