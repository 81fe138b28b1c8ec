"""spark-submit entry point of the benchmark's in-JVM part: the connector's plain read of a day's partitions versus
the daily aggregation of the same partitions, both warm, in one Spark application (no start-up in either): one
warm-up run of each, then three alternating runs, the best of each counts."""

import sys
import time

from telemetry_analytics.cli import run


def main(argv):
    from telemetry_analytics import cassandra_io as io
    from telemetry_analytics.daily_aggregates import daily_aggregates
    from telemetry_analytics.daily_job import readings_of_targets
    from telemetry_analytics.job_options import parse_daily
    from telemetry_analytics.local_days import zone
    from telemetry_analytics.selection import keep_plan, partition_keys, targets_for_days, utc_days_of
    from telemetry_analytics.spark_session import start, stop

    opts = parse_daily(argv, "bench_read")
    tz = zone(opts.tz)
    spark = start("bench", opts.hosts, opts.port)
    targets = targets_for_days(opts.days, io.source_days(spark, opts.keyspace, utc_days_of(opts.days, tz)), tz)
    keys = partition_keys(targets, tz)

    def plain():
        io.readings_of_partitions(spark, opts.keyspace, keys).write.format("noop").mode("overwrite").save()

    def aggregate():  # what the daily job computes, without the write-back
        local = readings_of_targets(spark, opts.keyspace, opts.tz, targets, keys)
        daily_aggregates(local, opts.tz).write.format("noop").mode("overwrite").save()

    rows = io.readings_of_partitions(spark, opts.keyspace, keys).count()
    # Warm-up of both, not only the plain read: the aggregation's first run compiles and JITs its own code (it
    # took twice its warm time), which made "warm" figures compare a warm read with a half-cold aggregation.
    plain()
    aggregate()
    timings = {"plain": [], "aggregate": []}
    for _ in range(3):
        for name, fn in (("plain", plain), ("aggregate", aggregate)):
            t0 = time.monotonic()
            fn()
            timings[name].append(time.monotonic() - t0)
    best = {k: min(v) for k, v in timings.items()}
    runs = " ".join(f"{k}_runs={','.join(f'{t:.2f}' for t in v)}" for k, v in timings.items())
    print(f"BENCH_READ rows={rows} partitions={len(keys)} keep={keep_plan(targets, tz).kind} "
          f"plain_s={best['plain']:.2f} aggregate_s={best['aggregate']:.2f} {runs}", flush=True)
    stop(spark)
    return 0


if __name__ == "__main__":
    run("bench", main, sys.argv[1:])
