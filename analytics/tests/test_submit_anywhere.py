"""spark-submit on any cluster, the parts that need no Spark: connection settings given to spark-submit win over
the job's defaults, and `analytics/submit --help` / `JOB --help` answer without a JVM."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from telemetry_analytics.spark_session import unset_only

ANALYTICS = Path(__file__).resolve().parents[1]
HOST = "spark.cassandra.connection.host"


def test_settings_given_to_spark_submit_win_over_the_jobs_defaults():
    defaults = {HOST: "127.0.0.1", "spark.cassandra.connection.port": "9042", "spark.cassandra.auth.username": "a"}
    submitted = ["spark.master", HOST, "spark.cassandra.auth.username"]
    assert unset_only(defaults, submitted) == {"spark.cassandra.connection.port": "9042"}
    assert unset_only(defaults, []) == defaults


@pytest.mark.parametrize("args, expect", [
    (["--help"], "usage: analytics/submit [--master URL] daily|report|export"),
    (["daily", "--help"], "usage: analytics/submit daily"),
    (["report", "--help"], "usage: analytics/submit report"),
    (["--master", "spark://192.0.2.1:7077", "export", "--from", "2026-01-01", "--help"],
     "usage: analytics/submit export"),
])
def test_help_answers_without_spark(args, expect):
    """No JVM: with SPARK_HOME pointing nowhere, spark-submit (the only thing here that starts one) cannot run."""
    env = {**os.environ, "SPARK_HOME": "/nonexistent/spark"}
    done = subprocess.run([str(ANALYTICS / "submit"), *args], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(expect) and done.stderr == ""


# Run by a bare Python: no site-packages (-S), only what a Spark cluster puts on the path: its pyspark and py4j
# zips and the --py-files archive. Every job module imports, with the telemetry_cassandra it needs (its settings; the
# Cassandra driver is not there, the connector is the jobs' driver), and the default report config is found.
IMPORT_ALL = """
import importlib, pkgutil, sys
import telemetry_analytics
for module in pkgutil.iter_modules(telemetry_analytics.__path__, "telemetry_analytics."):
    importlib.import_module(module.name)
own = [m for m in sys.modules if m.split(".")[0] in ("telemetry_analytics", "telemetry_cassandra")]
assert all(sys.modules[m].__file__.startswith(sys.argv[1]) for m in own), "imported from outside the archive"
assert "cassandra" not in sys.modules
from telemetry_analytics.job_options import parse_report
from telemetry_analytics.report_config import load_config
from telemetry_analytics.report_job import DEFAULT_CONFIG
load_config(DEFAULT_CONFIG)
print(parse_report(["--month", "2026-03"], DEFAULT_CONFIG).config, len(own))
"""


def test_the_dist_archive_carries_everything_the_jobs_import(tmp_path):
    made = subprocess.run(["make", "-s", "-C", str(ANALYTICS), "dist"], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stdout + made.stderr
    dist = ANALYTICS / "dist"
    assert sorted(p.name for p in dist.iterdir()) == ["daily.py", "export.py", "report.py", "telemetry_analytics.zip"]
    archive = str(dist / "telemetry_analytics.zip")
    spark_lib = Path(__import__("pyspark").__file__).parent / "python" / "lib"
    path = os.pathsep.join([archive, *map(str, sorted(spark_lib.glob("*.zip")))])
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": path}
    done = subprocess.run([sys.executable, "-S", "-c", IMPORT_ALL, archive], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{archive}/telemetry_analytics/report.toml ")
    for job in ("daily", "report", "export"):
        done = subprocess.run([sys.executable, "-S", str(dist / f"{job}.py"), "--help"], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=60)
        assert done.returncode == 0 and done.stdout.startswith(f"usage: analytics/submit {job}"), done.stderr
