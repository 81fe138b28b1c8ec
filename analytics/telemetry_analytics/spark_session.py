"""The SparkSession of a job, and one-line operator logs with the start-up / work split."""

from __future__ import annotations

import os
import sys
import time

# Python-side timestamps: pyspark turns naive datetimes into epoch values with the process's local zone; pinning
# it to UTC makes collected timestamps UTC, whatever the machine's zone.
os.environ["TZ"] = "UTC"
time.tzset()

T0 = time.monotonic()  # import time of the job module, i.e. right after spark-submit started Python


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
    if "spark.sql.shuffle.partitions" not in spark.sparkContext.getConf().toDebugString():
        # A day is a few hundred (source, metric) groups: Spark's default of 200 shuffle partitions costs more in
        # task overhead than the aggregation itself. Two per core keeps every core busy.
        spark.conf.set("spark.sql.shuffle.partitions", str(2 * spark.sparkContext.defaultParallelism))
    log(job, f"spark {spark.version} up, master {spark.sparkContext.master}, "
             f"start-up {time.monotonic() - T0:.1f} s")
    return spark


class Timer:
    def __init__(self):
        self.started = time.monotonic()

    def seconds(self) -> float:
        return time.monotonic() - self.started
