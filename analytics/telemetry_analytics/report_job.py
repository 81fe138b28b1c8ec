"""The report job (imperative shell): read the period's partitions once, compute the figures in Spark, collect the
small results, and write report.md, report.html and report.json."""

from __future__ import annotations

import json
import time
from datetime import timezone
from importlib import resources

from .intraday import BUCKET_MS
from .job_options import parse_report
from .local_days import zone
from .report_config import load_config
from .report_model import build_report, record_keys
from .report_render import html, markdown, summary
from .selection import partition_keys, targets_for_days, utc_days_of
from .spark_session import Timer, log, start, stop

JOB = "report"
UTC = timezone.utc
# Package data, so that the archive for spark-submit --py-files (make -C analytics dist) carries it too.
DEFAULT_CONFIG = resources.files(__package__) / "report.toml"


def _utc(ts):
    return ts.replace(tzinfo=UTC) if ts is not None and ts.tzinfo is None else ts


def collect_figures(spark, raw, config, tz: str):
    """raw: readings of the period with day = local day. Returns the report_model inputs."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from .daily_aggregates import daily_aggregates

    daily = [{**r.asDict(), "min_ts": _utc(r.min_ts), "max_ts": _utc(r.max_ts), "first_ts": _utc(r.first_ts),
              "last_ts": _utc(r.last_ts)} for r in daily_aggregates(raw, tz).collect()]
    # Frames (source, ts) per local day, and per source the median step between consecutive ones over the period
    # (the observed sample period).
    ts_ms = F.unix_millis("ts")
    steps = (raw.select("source", "day", "ts").distinct()
             .withColumn("step", ts_ms - F.lag(ts_ms).over(Window.partitionBy("source").orderBy("ts")))
             .cache())
    day_frames = {(r.source, r.day): r.frames
                  for r in steps.groupBy("source", "day").agg(F.count(F.lit(1)).alias("frames")).collect()}
    periods_ms = {r.source: r.period_ms
                  for r in steps.groupBy("source").agg(F.median("step").alias("period_ms")).collect()}
    frames: dict[str, int] = {}
    for (source, _), n in day_frames.items():  # a frame (source, ts) lies in one local day
        frames[source] = frames.get(source, 0) + n
    # 5-minute buckets of UTC instants (a DST change neither merges nor drops one), labelled locally by the page.
    bucket = (F.floor(F.unix_millis("ts") / BUCKET_MS) * BUCKET_MS).cast("long").alias("bucket")
    buckets = [r.asDict() for r in raw.groupBy("source", "metric", bucket).agg(
        F.min("value").alias("min"), F.avg("value").alias("mean"), F.max("value").alias("max"),
        F.count(F.lit(1)).alias("count")).collect()]

    paired = (raw.filter(F.col("metric").isin(config.inside, config.outside))
              .groupBy("source", "ts")
              .agg(F.max(F.when(F.col("metric") == config.inside, F.col("value"))).alias("inside"),
                   F.max(F.when(F.col("metric") == config.outside, F.col("value"))).alias("outside"))
              .filter(F.col("inside").isNotNull() & F.col("outside").isNotNull())
              .withColumn("diff", F.col("inside") - F.col("outside")))
    diffs = {r.source: {"pairs": r.pairs, "mean": r.mean, "biggest": r.big.diff,
                        "biggest_ts": _utc(r.big.ts)}
             for r in paired.groupBy("source").agg(
                 F.count(F.lit(1)).alias("pairs"), F.avg("diff").alias("mean"),
                 # biggest difference, earliest frame among equals
                 F.max(F.struct(F.col("diff"), (-ts_ms).alias("neg_ms"), F.col("ts"))).alias("big")).collect()}

    local = F.from_utc_timestamp("ts", tz)
    second_of_day = F.hour(local) * 3600 + F.minute(local) * 60 + F.second(local)
    start_s = config.night_start.hour * 3600 + config.night_start.minute * 60
    end_s = config.night_end.hour * 3600 + config.night_end.minute * 60
    night = (F.when(second_of_day >= start_s, F.to_date(local))
             .when(second_of_day < end_s, F.date_sub(F.to_date(local), 1)))
    cold = [{"source": r.source, "night": r.night, "below": r.below, "lowest": r.low.value,
             "lowest_ts": _utc(r.low.ts)}
            for r in (raw.filter((F.col("metric") == config.outside) & (F.col("value") < config.cold_threshold))
                      .withColumn("night", night).filter(F.col("night").isNotNull())
                      .groupBy("source", "night")
                      .agg(F.count(F.lit(1)).alias("below"), F.min(F.struct("value", "ts")).alias("low"))
                      .collect())]

    wanted = record_keys(config, daily, diffs, cold)
    records: dict = {}
    if wanted:
        keys = spark.createDataFrame(sorted(wanted), "source string, ts timestamp")
        for r in raw.join(F.broadcast(keys), ["source", "ts"]).select("source", "ts", "metric", "value").collect():
            records.setdefault((r.source, _utc(r.ts)), {})[r.metric] = r.value
    return daily, frames, diffs, cold, records, buckets, day_frames, periods_ms


def main(argv: list[str]) -> int:
    opts = parse_report(argv, DEFAULT_CONFIG)
    config = load_config(opts.config)
    tz = zone(opts.tz)
    spark = start(JOB, opts.hosts, opts.port)
    from pyspark.sql import functions as F

    from . import cassandra_io as io
    from .daily_aggregates import with_local_day

    work = Timer()
    targets = targets_for_days(opts.days, io.source_days(spark, opts.keyspace, utc_days_of(opts.days, tz)), tz)
    if config.sources:
        targets = {(s, d) for s, d in targets if s in config.sources}
    keys = partition_keys(targets, tz)
    log(JOB, f"keyspace {opts.keyspace}, zone {opts.tz}: {len(opts.days)} local day(s) {opts.days[0]} … "
             f"{opts.days[-1]}, {len({s for s, _ in targets})} source(s), {len(keys)} readings partition(s)")
    if targets:
        raw = (with_local_day(io.readings_of_partitions(spark, opts.keyspace, keys), opts.tz)
               .join(F.broadcast(io.targets_frame(spark, targets)), ["source", "day"])
               .cache())
        figures = collect_figures(spark, raw, config, opts.tz)
    else:
        figures = [], {}, {}, [], {}, [], {}, {}
    *figures, periods_ms = figures
    report = build_report(config, opts.title, opts.tz, opts.days, *figures, now_ms=int(time.time() * 1000),
                          periods_ms=periods_ms)
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "report.md").write_text(markdown(report), encoding="utf-8")
    page = opts.out / "report.html"
    page.write_text(html(report), encoding="utf-8")
    (opts.out / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    print(summary(report), flush=True)
    log(JOB, f"done in {work.seconds():.1f} s (work): {sum(s['readings'] for s in report['sources'])} readings")
    print(f"HTML report: {page.resolve()}", flush=True)
    print(f"Markdown report: {(opts.out / 'report.md').resolve()}", flush=True)
    stop(spark)
    return 0
