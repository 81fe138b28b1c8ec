"""analytics/bench: load N sources × D days of readings, then measure the daily job (wall time, start-up vs work)
for one day with 1 day stored and with D days stored, and its aggregation rate against the connector's plain read.
Prints figures; asserts nothing."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from .loader import CassandraLoader, greenhouse_readings

ROOT = Path(__file__).resolve().parents[3]  # the checkout the kit is installed (editable) from
UTC = timezone.utc


def parse(argv, prog: str = "analytics/bench", doc: str = __doc__, step: float = 15):
    env = os.environ.get
    p = argparse.ArgumentParser(prog=prog, description=doc)
    p.add_argument("--sources", type=int, default=20)
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--step", type=float, default=step, help=f"seconds between frames (default {step:g})")
    p.add_argument("--day", type=date.fromisoformat, default=date(2026, 1, 30), help="the day measured (last stored)")
    p.add_argument("--hosts", default=env("TELEMETRY_CASSANDRA_HOSTS", "127.0.0.1"))
    p.add_argument("--master", default=env("TELEMETRY_SPARK_MASTER", "local[*]"))
    return p.parse_args(argv)


def session(hosts: str):
    """A Cluster for --hosts, with the port, credentials and TLS of the TELEMETRY_CASSANDRA_* variables."""
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
    from cassandra.policies import DCAwareRoundRobinPolicy
    from telemetry_cassandra import connect_cluster, settings_from_env

    profile = ExecutionProfile(load_balancing_policy=DCAwareRoundRobinPolicy(), request_timeout=60)
    return connect_cluster(**{**settings_from_env(os.environ), "hosts": hosts},
                           execution_profiles={EXEC_PROFILE_DEFAULT: profile})


def ensure_loaded(cql, hosts: str, keyspace: str, args, days: int) -> None:
    """Migrate and load the keyspace unless an earlier bench run left it complete (source_days tells)."""
    first = args.day - timedelta(days=days - 1)
    migrate = subprocess.run([str(ROOT / "schema" / "migrate"), "--hosts", hosts, "--keyspace", keyspace],
                             capture_output=True, text=True)
    if migrate.returncode:
        sys.exit(f"bench: schema/migrate failed: {migrate.stderr.strip()}")
    have = sum(1 for d in range(days)
               for _ in cql.execute(f"SELECT source FROM {keyspace}.source_days WHERE day = %s",
                                    [first + timedelta(days=d)]))
    if have == args.sources * days:
        print(f"bench: {keyspace}: {days} day(s) × {args.sources} sources already loaded", flush=True)
        return
    loader = CassandraLoader(cql, keyspace)
    t0, rows = time.monotonic(), 0
    step_ms = int(args.step * 1000)
    for d in range(days):
        start = int(datetime(first.year, first.month, first.day, tzinfo=UTC).timestamp() * 1000) + d * 86_400_000
        for s in range(args.sources):
            rows += loader.write(greenhouse_readings(f"bench-{s:02d}", start, start + 86_400_000, step_ms,
                                                     seed=d * 1000 + s, with_vbat=True))
        print(f"bench: {keyspace}: loaded day {d + 1}/{days}, {rows:,} rows, "
              f"{rows / (time.monotonic() - t0):,.0f} rows/s", flush=True)


def submit(args, *job_args: str) -> tuple[float, str]:
    env = {**os.environ, "TELEMETRY_CASSANDRA_HOSTS": args.hosts}
    t0 = time.monotonic()
    done = subprocess.run([str(ROOT / "analytics" / "submit"), "--master", args.master, *job_args],
                          capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    if done.returncode:
        sys.exit(f"bench: {' '.join(job_args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall, done.stdout


def daily_run(args, keyspace: str) -> dict:
    wall, out = submit(args, "daily", "--keyspace", keyspace, "--tz", "UTC", "--day", args.day.isoformat())
    work = float(re.search(r"work ([\d.]+) s", out).group(1))
    readings = int(re.search(r"from (\d+) readings", out).group(1))
    # start-up = everything before the job's work timer: spark-submit, JVM, Spark session, connector session
    connect = float(re.search(r"connector session open in ([\d.]+) s", out).group(1))
    return {"wall": wall, "work": work, "startup": wall - work, "connect": connect, "readings": readings}


def main(argv=None) -> int:
    args = parse(argv if argv is not None else sys.argv[1:])
    cluster = session(args.hosts)
    cql = cluster.connect()
    one, many = "bench_1d", f"bench_{args.days}d"
    ensure_loaded(cql, args.hosts, one, args, 1)
    ensure_loaded(cql, args.hosts, many, args, args.days)
    cluster.shutdown()

    runs = {}
    for keyspace in (one, many, one, many):  # twice each, alternating; the better of the two counts
        r = daily_run(args, keyspace)
        print(f"bench: daily --day {args.day} on {keyspace}: wall {r['wall']:.1f} s = start-up {r['startup']:.1f} s "
              f"(connector session {r['connect']:.1f} s) + work {r['work']:.1f} s, {r['readings']:,} readings",
              flush=True)
        runs[keyspace] = min([runs[keyspace], r] if keyspace in runs else [r], key=lambda x: x["work"])
    _, out = submit(args, "bench_read", "--keyspace", many, "--tz", "UTC", "--day", args.day.isoformat())
    m = re.search(r"BENCH_READ rows=(\d+) partitions=(\d+) keep=(\w+) plain_s=([\d.]+) aggregate_s=([\d.]+)", out)
    rows, keep, plain_s, agg_s = int(m.group(1)), m.group(3), float(m.group(4)), float(m.group(5))
    print("bench: warm runs (s): " + re.search(r"(plain_runs=\S+ aggregate_runs=\S+)", out).group(1), flush=True)

    a, b = runs[one], runs[many]
    print("\n== analytics benchmark ==")
    print(f"data: {args.sources} sources, a frame every {args.step:g} s, 5 metrics; day {args.day}: {a['readings']:,} readings")
    for label, r in (("1 day stored:   ", a), (f"{args.days} days stored:", b)):
        print(f"daily job, {label} wall {r['wall']:.1f} s (start-up {r['startup']:.1f} s incl. connector session "
              f"{r['connect']:.1f} s; work {r['work']:.1f} s)")
    print(f"ratio {args.days} days / 1 day: work {b['work'] / a['work']:.2f}, wall {b['wall'] / a['wall']:.2f} (target ≤ 1.2)")
    print(f"job work rate: {b['readings'] / b['work']:,.0f} readings/s (incl. selection, write-back, watermark)")
    print(f"warm, same partitions ({rows:,} rows; the job keeps their readings by {keep}, selection.keep_plan): "
          f"plain read {rows / plain_s:,.0f} rows/s, "
          f"daily aggregation {rows / agg_s:,.0f} rows/s, ratio {plain_s / agg_s:.2f} (target ≥ 0.8)")
    return 0
