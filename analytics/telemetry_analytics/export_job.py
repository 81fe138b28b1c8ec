"""The export job (imperative shell): the raw readings of a range of local days, read as the daily job reads them
(targets from source_days, only those days' partitions, selection.keep_plan), written as one CSV file or as a
Parquet folder partitioned by local day.

CSV: header source,metric,ts,value; ts ISO 8601 UTC with milliseconds and Z; with a zone given (--tz or
TELEMETRY_TZ) a local_time column after ts, the same instant as local time with its offset
(2026-10-25T02:30:00.000+01:00); rows sorted by source, ts, metric;
values as Spark writes doubles (Java's Double.toString: every double round-trips exactly). Spark writes a folder of
parts: the rows go through one task into a temporary folder beside --out, and its one part is renamed onto --out, so
a reader never sees half a file. Parquet: ts a timestamp (UTC, microseconds), value a double, local_time (when
asked) the same text as in CSV, day=YYYY-MM-DD folders of local days, one file per day; written into a temporary
folder and renamed onto --out.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .daily_job import readings_of_targets
from .job_options import parse_export
from .local_days import NotFound, zone
from .selection import partition_keys, targets_for_days, utc_days_of
from .spark_session import Timer, log, start, stop

JOB = "export"
COLUMNS = ("source", "metric", "ts", "value")
TS_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"  # the session time zone is UTC (spark_session)


def unknown_sources(requested, in_range, known) -> list[str]:
    """Requested sources that have no partition in the range and no row in source_days on any day: names the data
    has never seen (a typo), as opposed to a known source that was silent in the range (an empty export)."""
    return [s for s in requested if s not in set(in_range) and s not in set(known)]


def columns(local_time: bool) -> tuple[str, ...]:
    return ("source", "metric", "ts", "local_time", "value") if local_time else COLUMNS


def local_time_column(tz: str):
    """ts as local time in tz, ISO 8601 with milliseconds and the offset in force at that instant
    (2026-10-25T02:30:00.000+02:00, then 2026-10-25T02:30:00.000+01:00 an hour later): from_utc_timestamp gives the
    wall clock, its distance from ts the offset."""
    from pyspark.sql import functions as F

    wall = F.from_utc_timestamp("ts", tz)
    offset_min = ((F.unix_millis(wall) - F.unix_millis("ts")) / 60_000).cast("int")
    sign = F.when(offset_min < 0, F.lit("-")).otherwise(F.lit("+"))
    return F.concat(F.date_format(wall, "yyyy-MM-dd'T'HH:mm:ss.SSS"),
                    F.format_string("%s%02d:%02d", sign, (F.abs(offset_min) / 60).cast("int"),
                                    F.abs(offset_min) % 60)
                    ).alias("local_time")


def _temporary_beside(out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))


def write_csv(readings, out: Path, tz: str | None = None) -> int:
    """One file at out (atomic rename), with the local_time column when tz is given; returns the number of rows."""
    from pyspark.sql import functions as F

    folder = _temporary_beside(out)
    try:
        parts = folder / "parts"
        local = [local_time_column(tz)] if tz else []
        (readings.repartition(1).sortWithinPartitions("source", "ts", "metric")
         .select("source", "metric", F.date_format("ts", TS_FORMAT).alias("ts"), *local, "value")
         .write.option("header", True).csv(str(parts)))
        found = sorted(parts.glob("part-*.csv"))
        part = found[0] if found else folder / "header.csv"
        if not found or part.stat().st_size == 0:  # no rows: Spark may write no part, or an empty one
            part.write_text(",".join(columns(bool(tz))) + "\n", encoding="utf-8")
        with part.open("rb") as f:
            rows = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b"")) - 1
        os.replace(part, out)
        return rows
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_parquet(spark, readings, out: Path, tz: str | None = None) -> int:
    """A folder at out (atomic rename), day=YYYY-MM-DD partitions, with the local_time column when tz is given;
    returns the number of rows."""
    folder = _temporary_beside(out)
    try:
        data = folder / "data"
        # Spark's default is INT96, a legacy encoding; TIMESTAMP_MICROS is the standard UTC instant type.
        spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        if tz:
            readings = readings.withColumn("local_time", local_time_column(tz))
        (readings.select(*columns(bool(tz)), "day").repartition("day").sortWithinPartitions("source", "ts", "metric")
         .write.partitionBy("day").parquet(str(data)))
        rows = spark.read.parquet(str(data)).count() if any(data.glob("day=*")) else 0  # the files' footers
        data.mkdir(exist_ok=True)
        os.rename(data, out)
        return rows
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str]) -> int:
    opts = parse_export(argv)
    tz = zone(opts.tz)
    spark = start(JOB, opts.hosts, opts.port)
    from pyspark.sql import functions as F

    from . import cassandra_io as io

    work = Timer()
    targets = targets_for_days(opts.days, io.source_days(spark, opts.keyspace, utc_days_of(opts.days, tz)), tz)
    if opts.sources:
        in_range = {s for s, _ in targets}
        if set(opts.sources) - in_range:
            known = (s for _, s in io.source_days(spark, opts.keyspace, None))  # every day: a small table
            unknown = unknown_sources(opts.sources, in_range, known)
            if unknown:
                stop(spark)
                raise NotFound(f"unknown source(s) {', '.join(unknown)}: no readings on any day in keyspace "
                               f"{opts.keyspace}")
        targets = {(s, d) for s, d in targets if s in opts.sources}
    keys = partition_keys(targets, tz)
    span = f"{opts.days[0]} … {opts.days[-1]}"
    log(JOB, f"keyspace {opts.keyspace}, zone {opts.tz}: {len(opts.days)} local day(s) {span}, "
             f"{len({s for s, _ in targets})} source(s), {len(keys)} readings partition(s)")
    if targets:
        readings = readings_of_targets(spark, opts.keyspace, opts.tz, targets, keys)
        if opts.metrics:
            readings = readings.filter(F.col("metric").isin(list(opts.metrics)))
        if opts.explain:
            print(readings._jdf.queryExecution().simpleString(), flush=True)
    else:  # nothing to read: the same writers, so an empty export has the same shape
        readings = spark.createDataFrame([], "source string, day date, metric string, ts timestamp, value double")
    local = opts.tz if opts.local_time else None
    if opts.format == "csv":
        rows = write_csv(readings, opts.out, local)
    else:
        rows = write_parquet(spark, readings, opts.out, local)
    if rows == 0:
        log(JOB, f"no readings in local days {span} (zone {opts.tz})"
                 + (f" of source(s) {', '.join(opts.sources)}" if opts.sources else "")
                 + (f" for metric(s) {', '.join(opts.metrics)}" if opts.metrics else "")
                 + f"; wrote {'the header only' if opts.format == 'csv' else 'an empty folder'}: {opts.out}")
    log(JOB, f"done: {rows} readings to {opts.out} ({opts.format}); work {work.seconds():.1f} s")
    stop(spark)
    return 0
