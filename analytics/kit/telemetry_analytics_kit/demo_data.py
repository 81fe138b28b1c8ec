"""Demo readings when the gateway has written none: two simulated greenhouses over the last days in the demo's
weather (a frost night, a hot afternoon, a mild day, the battery's voltage: telemetry_board_sim.demo_weather),
written the way the gateway writes (loader.CassandraLoader). Does nothing if the keyspace already has readings for
today (UTC)."""

from __future__ import annotations

import os
import random
import sys
import time
from datetime import datetime, timedelta, timezone

from telemetry_board_sim.demo_weather import demo_reading

from .loader import CassandraLoader, Reading

UTC = timezone.utc


def demo_readings(source: str, start_ms: int, now_ms: int, step_ms: int, seed: int) -> list[Reading]:
    """A frame every step_ms in [start_ms, now_ms), as a board in the demo's weather sends it."""
    rng = random.Random(seed)
    return [Reading(source, metric, ts, float(text))
            for ts in range(start_ms, now_ms, step_ms) for metric, text in demo_reading(ts, now_ms, rng)]


def main(days: int = 3) -> int:
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
    from cassandra.policies import DCAwareRoundRobinPolicy
    from telemetry_cassandra import cluster_from_env

    keyspace = os.environ.get("TELEMETRY_CASSANDRA_KEYSPACE", "telemetry")
    profile = ExecutionProfile(load_balancing_policy=DCAwareRoundRobinPolicy(), request_timeout=60)
    cluster = cluster_from_env(execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    cql = cluster.connect()
    today = datetime.now(UTC).date()
    if list(cql.execute(f"SELECT source FROM {keyspace}.source_days WHERE day = %s LIMIT 1", [today])):
        print(f"analytics demo: {keyspace} has readings for {today}: using them")
        cluster.shutdown()
        return 0
    now_ms = int(time.time() * 1000)
    start = int(datetime.combine(today - timedelta(days=days - 1), datetime.min.time(), UTC).timestamp() * 1000)
    loader = CassandraLoader(cql, keyspace)
    rows = sum(loader.write(demo_readings(name, start, now_ms, 300_000, seed=i))
               for i, name in enumerate(("greenhouse-1", "greenhouse-2")))
    print(f"analytics demo: no readings for {today} in {keyspace}: loaded {rows:,} simulated readings "
          f"(2 greenhouses, a frame every 5 minutes since {today - timedelta(days=days - 1)})")
    cluster.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
