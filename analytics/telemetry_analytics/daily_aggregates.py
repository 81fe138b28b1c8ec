"""Spark: per (source, local day, metric) statistics of readings, in the column layout of daily_summary.

Ties: min_ts / max_ts are the earliest reading with the extreme value (values with two decimals often repeat).
stddev is the sample standard deviation (null for one reading); max_gap_ms the longest interval between two
consecutive readings of the day (null for one reading).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

KEY = ["source", "day", "metric"]


def with_local_day(readings: DataFrame, tz: str) -> DataFrame:
    """readings(source, day=UTC day, metric, ts, value) → same rows with day = the local day of ts in tz.
    Needs spark.sql.session.timeZone=UTC (set by spark_session), so ts renders as UTC before the shift."""
    return readings.withColumn("day", F.to_date(F.from_utc_timestamp("ts", tz)))


def max_gap_ms(sorted_ms):
    """Longest step between consecutive values of an ascending array of epoch ms (null below two values)."""
    steps = F.zip_with(F.slice(sorted_ms, 2, 2**31 - 1), sorted_ms, lambda later, earlier: later - earlier)
    return F.when(F.size(sorted_ms) > 1, F.array_max(steps))


def daily_aggregates(local_readings: DataFrame, tz: str) -> DataFrame:
    # One aggregation, no window: the gap comes from each group's timestamps (a day of one source and metric: a
    # long per reading), so rows are neither shuffled whole nor sorted and buffered per group, which lag() needs.
    # count, first_ts and last_ts are read off the same sorted array: three aggregates fewer per reading.
    ts_ms = F.unix_millis("ts")
    agg = local_readings.groupBy(*KEY).agg(
        F.min(F.struct("value", "ts")).alias("lo"),
        # max value, earliest ts among equals: the largest (value, -ts)
        F.max(F.struct(F.col("value"), (-ts_ms).alias("neg_ms"))).alias("hi"),
        F.avg("value").alias("mean"),
        F.stddev_samp("value").alias("stddev"),
        F.collect_list(ts_ms).alias("times_ms"),
    )
    # sort_array, not array_sort: array_sort(x) is array_sort(x, default comparator lambda), which Spark 3.5 runs
    # interpreted, one lambda call per comparison (≈ 70k per group at a reading every 15 s, and the plan held
    # it three times); sort_array is generated code (Arrays.sort of the longs). Sorted in its own step, so the
    # array is sorted once and then used by every column below.
    agg = agg.withColumn("times_ms", F.sort_array("times_ms"))
    times = F.col("times_ms")
    return agg.select(
        "source", F.lit(tz).alias("tz"), "day", "metric", F.size(times).cast("long").alias("count"),
        F.col("lo.value").alias("min"), F.col("lo.ts").alias("min_ts"),
        F.col("hi.value").alias("max"), F.timestamp_millis(-F.col("hi.neg_ms")).alias("max_ts"),
        "mean", "stddev",
        F.timestamp_millis(F.element_at(times, 1)).alias("first_ts"),
        F.timestamp_millis(F.element_at(times, -1)).alias("last_ts"),
        max_gap_ms(times).alias("max_gap_ms"),
    )
