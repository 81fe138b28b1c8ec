"""spark-submit on any cluster, the parts that need no Spark: connection settings given to spark-submit win over
the job's defaults, and `analytics/submit --help` / `JOB --help` answer without a JVM."""

from __future__ import annotations

import os
import subprocess
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
    (["--master", "spark://192.0.2.1:7077", "export", "--from", "2026-01-01", "--help"], "usage: analytics/submit export"),
])
def test_help_answers_without_spark(args, expect):
    """No JVM: with SPARK_HOME pointing nowhere, spark-submit (the only thing here that starts one) cannot run."""
    env = {**os.environ, "SPARK_HOME": "/nonexistent/spark"}
    done = subprocess.run([str(ANALYTICS / "submit"), *args], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(expect) and done.stderr == ""
