"""The analytics jobs on the cluster: the daily job and the report, submitted to the Spark standalone master with
the analytics README's plain spark-submit recipe (the dist archive, no checkout on the path), read and write the
RF 3 keyspace at LOCAL_QUORUM and give exactly what the same jobs give in local[*] on a single node with the same
data, value by value; with one node down (SIGKILL) they still complete with the same result."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
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


README = ROOT / "analytics" / "README.md"
PLACEHOLDERS = {"master": "spark://10.0.0.20:7077", "hosts": "10.0.0.11,10.0.0.12,10.0.0.13", "keyspace": "telemetry",
                "out": "report-2026-05"}


def recipe() -> dict[str, list[str]]:
    """The spark-submit commands of the README's "Spark on any cluster", as written, by entry script."""
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(), re.S)
    block = next(b for b in blocks if "--py-files telemetry_analytics.zip" in b)
    commands = [shlex.split(line) for line in block.replace("\\\n", " ").splitlines() if line.strip()]
    assert all(c[0] == "spark-submit" for c in commands), commands
    return {next(word for word in c if word.endswith(".py")): c for c in commands}


def put_in(word: str, values: dict) -> str:
    """The recipe's placeholders replaced: the master URL and the hosts wherever they are, the keyspace and the
    report folder where they are a whole argument."""
    for key in ("master", "hosts"):
        word = word.replace(PLACEHOLDERS[key], values[key])
    return next((values[key] for key in ("keyspace", "out") if word == PLACEHOLDERS[key]), word)


@pytest.fixture(scope="module")
def submit_from(tmp_path_factory):
    """A copy of `make -C analytics dist` outside the checkout, the folder the recipe runs in, and a HOME whose
    default Ivy cache (~/.ivy2) is the checkout's, so the connector resolves offline as in every other test."""
    run(["make", "-s", "-C", ROOT / "analytics", "dist"])
    where = tmp_path_factory.mktemp("submit-from")
    shutil.copytree(ROOT / "analytics" / "dist", where, dirs_exist_ok=True)
    home = where / "home"
    home.mkdir()
    (home / ".ivy2").symlink_to(ROOT / ".state" / "spark-ivy")
    return where, home


def submit_as_written(where_home, script: str, hosts: str, keyspace: str, out: Path | None = None):
    """The README's command for script, with this cluster's master, hosts and keyspace put in, run by pyspark's
    spark-submit from the dist copy with a Python that has none of this project's packages (the interpreter the
    venv was made from) on the driver and the executors, and nothing of the checkout on a path. The job's own
    default contact point (TELEMETRY_CASSANDRA_HOSTS) is the reference node, which lacks the keyspace: the run
    only works if spark-submit's --conf wins."""
    where, home = where_home
    values = {"master": SPARK_MASTER, "hosts": hosts, "keyspace": keyspace, "out": str(out)}
    args = [put_in(word, values) for word in recipe()[script]]
    assert args[args.index("--tz"):args.index("--to") + 2] == ["--tz", TZ, "--from", DAYS[0], "--to", DAYS[1]]
    spark_home = Path(__import__("pyspark").__file__).parent
    env = {**{k: v for k, v in os.environ.items() if k.startswith("TELEMETRY_CASSANDRA_") or k == "JAVA_HOME"},
           "HOME": str(home), "SPARK_HOME": str(spark_home), "PATH": f"{spark_home / 'bin'}:/usr/bin:/bin",
           "PYSPARK_PYTHON": sys._base_executable, "SPARK_LOCAL_IP": "127.0.0.1",
           "TELEMETRY_CASSANDRA_HOSTS": REFERENCE_HOST}
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=where, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{output[-8000:]}"
    assert f"master {SPARK_MASTER}" in output and f" s to {hosts}, start-up" in output, output[-6000:]
    assert "consistency read LOCAL_QUORUM write LOCAL_QUORUM" in output
    return done


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
                                                 submit_from, tmp_path):
    expected_summary, expected_report = single_node_result
    hosts = ",".join(cassandra_cluster[1:])  # not 127.0.0.1: the contact points in use are those of --conf
    CassandraLoader(quorum, rf3_keyspace).write(readings())

    submit_as_written(submit_from, "daily.py", hosts, rf3_keyspace)
    got = summary(quorum, rf3_keyspace)
    assert len(expected_summary) == 3 * 3 * 4  # sources × local days × metrics
    assert got == expected_summary  # every value of every row, exactly
    submit_as_written(submit_from, "report.py", hosts, rf3_keyspace, tmp_path / "all-up")
    assert report_json(tmp_path / "all-up") == expected_report

    # One node down (SIGKILL): LOCAL_QUORUM is two of three replicas, so the jobs still complete, same result.
    quorum.execute(f"TRUNCATE {rf3_keyspace}.daily_summary")
    node(3, "kill")
    try:
        submit_as_written(submit_from, "daily.py", hosts, rf3_keyspace)
        assert summary(quorum, rf3_keyspace) == expected_summary
        submit_as_written(submit_from, "report.py", hosts, rf3_keyspace, tmp_path / "node-3-down")
        assert report_json(tmp_path / "node-3-down") == expected_report
    finally:
        node(3, "start")
