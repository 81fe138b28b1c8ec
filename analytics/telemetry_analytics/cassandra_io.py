"""Spark ↔ Cassandra through the spark-cassandra-connector's DataFrame API: the only module that names tables.

Reads of readings are by full partition key: a DataFrame of (source, day) keys joined with the table, which the
connector turns into a Cassandra Direct Join (one query per key) — cost follows the keys, not the table size.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Iterable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

CASSANDRA = "org.apache.spark.sql.cassandra"


def table(spark: SparkSession, keyspace: str, name: str, **options: str) -> DataFrame:
    return spark.read.format(CASSANDRA).options(keyspace=keyspace, table=name, **options).load()


def readings_of_partitions(spark: SparkSession, keyspace: str, keys: list[tuple[str, date]]) -> DataFrame:
    """Rows of exactly these (source, UTC day) partitions. directJoinSetting=on: the join is always a direct
    join, even when the connector's size estimate of a young table would pick a full scan."""
    slices = max(1, min(len(keys), spark.sparkContext.defaultParallelism * 2))
    key_df = spark.createDataFrame(keys, "source string, day date").repartition(slices)
    return key_df.join(table(spark, keyspace, "readings", directJoinSetting="on"), ["source", "day"])


def all_readings(spark: SparkSession, keyspace: str) -> DataFrame:
    """A full scan, for --all only."""
    return table(spark, keyspace, "readings")


def source_days(spark: SparkSession, keyspace: str, utc_days: list[date] | None) -> list[tuple[date, str]]:
    """(day, source) rows of these UTC days (partition-key IN, pushed down), or of every day when None."""
    df = table(spark, keyspace, "source_days")
    if utc_days is not None:
        df = df.filter(F.col("day").isin(utc_days))
    return [(r.day, r.source) for r in df.collect()]


def changes_in(spark: SparkSession, keyspace: str, buckets: list[datetime]) -> list[tuple[str, date, datetime]]:
    df = table(spark, keyspace, "day_changes").filter(F.col("bucket").isin(buckets))
    return [(r.source, r.day, r.written_at) for r in df.select("source", "day", "written_at").collect()]


def read_watermark(spark: SparkSession, keyspace: str, job: str, scope: str) -> datetime | None:
    rows = (table(spark, keyspace, "job_watermarks")
            .filter((F.col("job") == job) & (F.col("scope") == scope)).select("watermark").collect())
    return rows[0].watermark if rows else None


def write_watermark(spark: SparkSession, keyspace: str, job: str, scope: str, watermark: datetime,
                    detail: str) -> None:
    df = spark.createDataFrame([(job, scope, watermark, detail)],
                               "job string, scope string, watermark timestamp, detail string")
    append(df.withColumn("finished_at", F.current_timestamp()), keyspace, "job_watermarks")


def append(df: DataFrame, keyspace: str, name: str) -> None:
    """Cassandra writes are upserts: re-writing a key replaces its row, which makes re-runs idempotent."""
    df.write.format(CASSANDRA).options(keyspace=keyspace, table=name).mode("append").save()


def targets_frame(spark: SparkSession, targets: Iterable[tuple[str, date]]) -> DataFrame:
    return spark.createDataFrame(sorted(targets), "source string, day date")
