"""The SparkSession of a job, and one-line operator logs with the start-up / work split."""

from __future__ import annotations

import os
import sys
import threading
import time

# Python-side timestamps: pyspark turns naive datetimes into epoch values with the process's local zone; pinning
# it to UTC makes collected timestamps UTC, whatever the machine's zone.
os.environ["TZ"] = "UTC"
time.tzset()

T0 = time.monotonic()  # import time of the job module, i.e. right after spark-submit started Python

# Reads and writes at LOCAL_QUORUM unless spark-submit says otherwise (--conf KEY=LEVEL): what the gateway wrote
# at LOCAL_QUORUM is then read back whole even with a replica down or behind, and a summary written is on a
# majority of its replicas. The connector's defaults are LOCAL_ONE for reads (a replica that missed writes may
# answer alone) and LOCAL_QUORUM for writes. On one node either level is that node.
CONSISTENCY_KEYS = ("spark.cassandra.input.consistency.level", "spark.cassandra.output.consistency.level")
DEFAULT_CONSISTENCY = "LOCAL_QUORUM"


def log(job: str, message: str) -> None:
    print(f"{job}: {message}", file=sys.stderr, flush=True)


def start(job: str, hosts: str, port: int):
    """Settings a job cannot run without are set here, so a bare `spark-submit … analytics/<job>.py` works as
    long as --packages names the connector."""
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.appName(f"telemetry-{job}")
               .config("spark.sql.extensions", "com.datastax.spark.connector.CassandraSparkExtensions")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.cassandra.connection.host", hosts)
               .config("spark.cassandra.connection.port", str(port)))
    spark = builder.getOrCreate()
    submitted = spark.sparkContext.getConf()
    for key in CONSISTENCY_KEYS:
        if not submitted.contains(key):
            spark.conf.set(key, DEFAULT_CONSISTENCY)
    if "spark.sql.shuffle.partitions" not in submitted.toDebugString():
        # A day is a few hundred (source, metric) groups: Spark's default of 200 shuffle partitions costs more in
        # task overhead than the aggregation itself. Two per core keeps every core busy.
        spark.conf.set("spark.sql.shuffle.partitions", str(2 * spark.sparkContext.defaultParallelism))
    if spark.sparkContext.getConf().get("spark.ui.showConsoleProgress", "false") != "true":
        ProgressLog(spark, job).start()
    log(job, f"spark {spark.version} up, master {spark.sparkContext.master}, "
             f"consistency read {spark.conf.get(CONSISTENCY_KEYS[0], '?')} write {spark.conf.get(CONSISTENCY_KEYS[1], '?')}, "
             f"start-up {time.monotonic() - T0:.1f} s")
    _connect(spark, job)
    return spark


_sessions = {}


def _connect(spark, job: str) -> None:
    """Opens the connector's session (connections, cluster metadata) before any work. It is a fixed cost of every
    run whatever the data (seconds in a fresh JVM), so it belongs to start-up; until now it was paid by the first
    read and counted as work. The session stays open until stop(): the connector's cache hands the same session
    to every read and write of the job instead of closing it after a few idle seconds and reconnecting."""
    t0 = time.monotonic()
    jvm = spark.sparkContext._jvm
    connector = jvm.com.datastax.spark.connector.cql.CassandraConnector.apply(spark.sparkContext._jsc.sc().getConf())
    _sessions[id(spark)] = connector.openSession()
    log(job, f"connector session open in {time.monotonic() - t0:.1f} s, start-up {time.monotonic() - T0:.1f} s")


def stop(spark) -> None:
    session = _sessions.pop(id(spark), None)
    if session is not None:
        session.close()
    spark.stop()


class Timer:
    def __init__(self):
        self.started = time.monotonic()

    def seconds(self) -> float:
        return time.monotonic() - self.started


class ProgressLog(threading.Thread):
    """Without Spark's console bar (no terminal): every `every` s, one line per stage that is still running."""

    def __init__(self, spark, job: str, every: float = 15.0):
        super().__init__(name="progress-log", daemon=True)
        self.tracker, self.job, self.every = spark.sparkContext.statusTracker(), job, every

    def run(self) -> None:
        while True:
            time.sleep(self.every)
            try:
                for stage_id in self.tracker.getActiveStageIds():
                    info = self.tracker.getStageInfo(stage_id)
                    if info:
                        log(self.job, f"progress: stage {stage_id} ({info.name}): "
                                      f"{info.numCompletedTasks}/{info.numTasks} tasks done, {info.numActiveTasks} running")
            except Exception:  # the context is stopping
                return
