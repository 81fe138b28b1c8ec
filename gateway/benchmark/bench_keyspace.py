"""The benchmark's keyspace in Cassandra: connecting (TELEMETRY_CASSANDRA_* variables), creating it afresh, and
emptying it between phases."""

from __future__ import annotations

import subprocess
import time

from cassandra.cluster import Cluster
from telemetry_cassandra import cluster_from_env
from telemetry_conformance.process_usage import cassandra_pid, cpu_seconds

from bench_settings import KEYSPACE, ROOT

GATEWAY_TABLES = ("readings", "latest", "source_days", "day_changes")


def bench_cluster() -> Cluster:
    """Where the gateway under test writes too: it reads the same TELEMETRY_CASSANDRA_* variables."""
    return cluster_from_env()


def fresh_keyspace() -> None:
    cluster = bench_cluster()
    session = cluster.connect()
    session.execute(f"DROP KEYSPACE IF EXISTS {KEYSPACE}", timeout=120)
    cluster.shutdown()
    subprocess.run([str(ROOT / "schema" / "migrate"), "--keyspace", KEYSPACE], check=True,
                   stdout=subprocess.DEVNULL)
    cluster = bench_cluster()
    session = cluster.connect(KEYSPACE)
    session.execute("CREATE TABLE IF NOT EXISTS latte_readings (source text, day bigint, metric text, ts bigint, "
                    "value double, PRIMARY KEY ((source, day), metric, ts))")
    cluster.shutdown()


def clean_slate() -> float:
    """Empty the gateway's tables and wait until Cassandra is idle (flushes and compactions of the previous phase
    done), so each phase measures the gateway at that load, not the previous phase's background work. Returns
    the seconds waited."""
    cluster = bench_cluster()
    session = cluster.connect(KEYSPACE)
    for table in GATEWAY_TABLES:
        session.execute(f"TRUNCATE {table}", timeout=120)
    cluster.shutdown()
    started = time.monotonic()
    while time.monotonic() - started < 120:
        before = cpu_seconds(cassandra_pid())
        time.sleep(1)
        if cpu_seconds(cassandra_pid()) - before < 0.15:
            break
    return time.monotonic() - started
