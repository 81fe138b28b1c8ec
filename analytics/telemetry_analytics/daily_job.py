"""The daily aggregate job (imperative shell): select days, read their partitions, aggregate, upsert, watermark."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from .job_options import parse_daily
from .local_days import zone
from .selection import (change_buckets, keep_plan, partition_keys, targets_for_days, targets_from_changes,
                        utc_days_of)
from .spark_session import Timer, log, start, stop

JOB = "daily"
UTC = timezone.utc
# day_changes rows live 90 days (schema/002); an older watermark cannot trust them to be complete.
CHANGES_KEPT = timedelta(days=89)


def select_targets(spark, opts, tz, run_start: datetime):
    """(targets, description); targets None means every local day (--all)."""
    from . import cassandra_io as io

    if opts.all:
        return None, "all days (full scan of readings)"
    if opts.days is not None:
        rows = io.source_days(spark, opts.keyspace, utc_days_of(opts.days, tz))
        return targets_for_days(opts.days, rows, tz), f"{len(opts.days)} requested day(s)"
    watermark = io.read_watermark(spark, opts.keyspace, JOB, opts.tz)
    if watermark is not None:
        watermark = watermark.replace(tzinfo=UTC)
    if watermark is None or run_start - watermark > CHANGES_KEPT:
        rows = io.source_days(spark, opts.keyspace, None)
        why = "no watermark yet" if watermark is None else f"watermark {watermark:%Y-%m-%d} older than the change log"
        return targets_from_changes([(s, d, None) for d, s in rows], None, tz), f"{why}: every day in source_days"
    since = watermark - timedelta(seconds=opts.clock_skew_s)
    buckets = change_buckets(since, run_start)
    changes = io.changes_in(spark, opts.keyspace, buckets)
    changes = [(s, d, w.replace(tzinfo=UTC)) for s, d, w in changes]
    return (targets_from_changes(changes, since, tz),
            f"changes since {since:%Y-%m-%dT%H:%M:%SZ} ({len(buckets)} hourly change partitions)")


def readings_of_targets(spark, keyspace: str, tz_name: str, targets, keys):
    """Readings of the partitions `keys` with their local day as `day`, only those of a target (source, local
    day). The cheapest form selection.keep_plan allows: in UTC (the default) the partitions are the targets, so
    this is the plain read itself; with every source on every day a range filter on ts (no conversion per
    dropped reading), the local day computed once per kept one; else a broadcast join with the targets."""
    from functools import reduce

    from pyspark.sql import functions as F

    from . import cassandra_io as io
    from .daily_aggregates import with_local_day

    readings = io.readings_of_partitions(spark, keyspace, keys)
    keep = keep_plan(targets, zone(tz_name))
    if keep.kind == "partitions":
        return readings
    if keep.kind == "windows":
        ts = F.col("ts")
        in_window = reduce(lambda a, b: a | b,
                           [(ts >= F.lit(start)) & (ts < F.lit(end)) for start, end in keep.windows])
        return with_local_day(readings.filter(in_window), tz_name)
    return with_local_day(readings, tz_name).join(F.broadcast(io.targets_frame(spark, targets)), ["source", "day"])


def main(argv: list[str]) -> int:
    opts = parse_daily(argv)
    tz = zone(opts.tz)
    spark = start(JOB, opts.hosts, opts.port)
    from pyspark.sql import functions as F

    from . import cassandra_io as io
    from .daily_aggregates import daily_aggregates, with_local_day

    work = Timer()
    run_start = datetime.now(UTC)
    targets, what = select_targets(spark, opts, tz, run_start)
    log(JOB, f"selection took {work.seconds():.1f} s")
    if targets is None:
        local = with_local_day(io.all_readings(spark, opts.keyspace), opts.tz)
        log(JOB, f"keyspace {opts.keyspace}, zone {opts.tz}: {what}")
    else:
        days = sorted({d for _, d in targets})
        keys = partition_keys(targets, tz)
        span = f"{days[0]} … {days[-1]}" if days else "-"
        log(JOB, f"keyspace {opts.keyspace}, zone {opts.tz}: {what} → {len(days)} local day(s) {span}, "
                 f"{len({s for s, _ in targets})} source(s), {len(keys)} readings partition(s)")
        if not targets:
            return _finish(spark, opts, run_start, work, 0, 0)
        local = readings_of_targets(spark, opts.keyspace, opts.tz, targets, keys)
    summary = daily_aggregates(local, opts.tz).withColumn("computed_at", F.current_timestamp())
    if opts.explain:
        print(summary._jdf.queryExecution().simpleString(), flush=True)
    summary = summary.cache()
    step = Timer()
    totals = summary.agg(F.count(F.lit(1)), F.sum("count")).first()
    rows, readings_count = totals[0], totals[1] or 0
    log(JOB, f"read and aggregated {readings_count} readings into {rows} rows in {step.seconds():.1f} s")
    step = Timer()
    io.append(summary, opts.keyspace, "daily_summary")
    log(JOB, f"upserted {rows} rows into daily_summary in {step.seconds():.1f} s")
    return _finish(spark, opts, run_start, work, rows, readings_count)


def _finish(spark, opts, run_start, work, rows: int, readings_count: int) -> int:
    from . import cassandra_io as io

    if opts.days is None:  # --since-last and --all advance the watermark; explicit days leave it alone
        io.write_watermark(spark, opts.keyspace, JOB, opts.tz, run_start,
                           f"{rows} summary rows, {readings_count} readings")
    seconds = work.seconds()
    rate = readings_count / seconds if seconds else 0
    log(JOB, f"done: {rows} summary rows from {readings_count} readings; work {seconds:.1f} s "
             f"({rate:,.0f} readings/s)")
    stop(spark)
    return 0
