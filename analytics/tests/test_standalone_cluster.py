"""The daily job on a Spark standalone cluster: a master and one worker from the pinned pyspark distribution,
on loopback, and the same analytics/submit command with --master spark://…"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from telemetry_analytics_kit import reference
from telemetry_analytics_kit.checks import assert_matches, summary_rows
from telemetry_analytics_kit.loader import greenhouse_readings

from analytics_fixtures import keyspace, loader, submit  # noqa: F401  (fixtures)

pytestmark = pytest.mark.cassandra
SPARK_HOME = Path(__import__("pyspark").__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """spark://127.0.0.1:PORT with one worker (1 core, 1 GiB); both stopped by pid afterwards."""
    work = tmp_path_factory.mktemp("spark-worker")
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
    port, worker_port = free_port(), free_port()
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    logs = work / "logs"
    logs.mkdir()
    master = subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(free_port())], env=env,
                              stdout=open(logs / "master.log", "w"), stderr=subprocess.STDOUT)
    worker = None
    try:
        wait_for_port(port)
        url = f"spark://127.0.0.1:{port}"
        worker = subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                   "--port", str(worker_port), "--webui-port", str(free_port()), "--cores", "1",
                                   "--memory", "1g", "--work-dir", str(work)], env=env,
                                  stdout=open(logs / "worker.log", "w"), stderr=subprocess.STDOUT)
        wait_for_port(worker_port)
        end = time.monotonic() + 60
        while "Successfully registered with master" not in (logs / "worker.log").read_text():
            assert time.monotonic() < end, (logs / "worker.log").read_text()
            time.sleep(0.3)
        yield url, work
    finally:
        for process in (worker, master):
            if process:
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()


def test_daily_job_runs_on_a_standalone_cluster(cluster, loader, submit, cql, keyspace):
    url, work = cluster
    start = int(datetime(2026, 5, 4, tzinfo=timezone.utc).timestamp() * 1000)
    readings = greenhouse_readings("cluster-gh", start, start + 86_400_000, 120_000, seed=5)
    loader.write(readings)
    done = submit("daily", "--tz", "UTC", "--day", "2026-05-04", "--explain", master=url)
    assert f"master {url}" in done.stdout
    apps = [p for p in work.iterdir() if p.name.startswith("app-")]
    assert apps and any((a / "0" / "stderr").exists() for a in apps)  # an executor ran on our worker
    # In UTC the partitions read are the targets (selection.keep_plan): readings go from the direct join to the
    # aggregation as read, with no filter, no time-zone conversion and no join with the targets.
    plan = done.stdout[done.stdout.index("== Physical Plan =="):]
    assert "Cassandra Direct Join" in plan and plan.count(f"{keyspace}.readings") == 1
    assert "from_utc_timestamp" not in plan and "BroadcastHashJoin" not in plan
    assert not re.search(r"Filter .*\bts#\d+", plan)
    expected = reference.daily(readings, "UTC", {date(2026, 5, 4)})
    actual = summary_rows(cql, keyspace, "UTC")
    assert set(actual) == set(expected)
    assert_matches(actual, expected)
