"""The analytics jobs on the cluster: the daily job and the report, submitted to the Spark standalone master, read
and write the RF 3 keyspace at LOCAL_QUORUM and give exactly what the same jobs give in local[*] on a single node
with the same data, value by value; with one node down (SIGKILL) they still complete with the same result."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from datetime import date, datetime, timezone
from pathlib import Path

import pytest
from telemetry_analytics_kit.loader import CassandraLoader, greenhouse_readings

from cluster_fixtures import (MIGRATE, ROOT, SPARK_MASTER, cassandra_cluster, node, quorum,  # noqa: F401 (fixtures)
                              rf3_keyspace, run)
from conftest import connect

pytestmark = pytest.mark.cassandra

SUBMIT = ROOT / "analytics" / "submit"
REFERENCE_HOST = "127.0.0.4"  # the single node: deploy/cluster/reference-node, a one-node cluster of its own
DAYS = ("2026-05-03", "2026-05-05")  # first and last local day
TZ = "Europe/Berlin"  # local days that straddle UTC days: two partitions per local day


def readings():
    start = int(datetime(2026, 5, 2, 20, tzinfo=timezone.utc).timestamp() * 1000)
    end = int(datetime(2026, 5, 6, 2, tzinfo=timezone.utc).timestamp() * 1000)
    out = []
    for n, source in enumerate(("gh-north", "gh-south", "gh-shed")):
        out += greenhouse_readings(source, start + n * 7_000, end, 60_000, seed=n, night_low=lambda d: d % 3 - 0.5)
    return out


def submit(job: str, hosts: str, keyspace: str, master: str, out: Path | None = None):
    args = [str(SUBMIT), "--master", master, job, "--tz", TZ, "--from", DAYS[0], "--to", DAYS[1]]
    if out is not None:
        args += ["--out", str(out)]
    env = {**os.environ, "TELEMETRY_CASSANDRA_HOSTS": hosts, "TELEMETRY_CASSANDRA_KEYSPACE": keyspace}
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, f"{job} on {master} failed:\n{done.stdout[-6000:]}\n{done.stderr[-6000:]}"
    return done


def summary(session, keyspace: str) -> dict:
    """daily_summary as {(tz, source, day, metric): every column but computed_at}."""
    rows = {}
    for row in session.execute(f"SELECT * FROM {keyspace}.daily_summary"):
        values = row._asdict()
        values.pop("computed_at")
        rows[(row.tz, row.source, str(row.day), row.metric)] = values
    return rows


def report_json(folder: Path) -> dict:
    report = json.loads((folder / "report.json").read_text())
    report.pop("generated_at", None)
    return report


@pytest.fixture(scope="module")
def single_node_result(tmp_path_factory):
    """The jobs in local[*] against a single node (deploy/cluster/reference-node, started here and stopped
    afterwards): (daily_summary, report.json)."""
    reference = ROOT / "deploy" / "cluster" / "reference-node"
    run([reference, "start"])
    try:
        keyspace = f"reference_{uuid.uuid4().hex[:8]}"
        run([MIGRATE, "--hosts", REFERENCE_HOST, "--keyspace", keyspace])
        cluster = connect(REFERENCE_HOST)
        try:
            session = cluster.connect()
            CassandraLoader(session, keyspace).write(readings())
            submit("daily", REFERENCE_HOST, keyspace, "local[*]")
            out = tmp_path_factory.mktemp("single-report")
            submit("report", REFERENCE_HOST, keyspace, "local[*]", out)
            yield summary(session, keyspace), report_json(out)
        finally:
            cluster.shutdown()
    finally:
        run([reference, "stop"], check=False)


def test_jobs_on_the_cluster_match_a_single_node(single_node_result, cassandra_cluster, rf3_keyspace, quorum,
                                                 tmp_path):
    expected_summary, expected_report = single_node_result
    hosts = ",".join(cassandra_cluster)
    CassandraLoader(quorum, rf3_keyspace).write(readings())

    done = submit("daily", hosts, rf3_keyspace, SPARK_MASTER)
    assert f"master {SPARK_MASTER}" in done.stdout + done.stderr
    assert "consistency read LOCAL_QUORUM write LOCAL_QUORUM" in done.stdout + done.stderr
    got = summary(quorum, rf3_keyspace)
    assert len(expected_summary) == 3 * 3 * 4  # sources × local days × metrics
    assert got == expected_summary  # every value of every row, exactly
    submit("report", hosts, rf3_keyspace, SPARK_MASTER, tmp_path / "all-up")
    assert report_json(tmp_path / "all-up") == expected_report

    # One node down (SIGKILL): LOCAL_QUORUM is two of three replicas, so the jobs still complete, same result.
    quorum.execute(f"TRUNCATE {rf3_keyspace}.daily_summary")
    node(3, "kill")
    try:
        submit("daily", hosts, rf3_keyspace, SPARK_MASTER)
        assert summary(quorum, rf3_keyspace) == expected_summary
        submit("report", hosts, rf3_keyspace, SPARK_MASTER, tmp_path / "node-3-down")
        assert report_json(tmp_path / "node-3-down") == expected_report
    finally:
        node(3, "start")
