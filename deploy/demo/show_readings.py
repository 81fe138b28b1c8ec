"""Demo step: what the gateway wrote, as an operator would check it: rows per source per UTC day, latest values."""

import os
from datetime import datetime, timedelta, timezone

from telemetry_cassandra import cluster_from_env

keyspace = os.environ.get("TELEMETRY_CASSANDRA_KEYSPACE", "telemetry")
cluster = cluster_from_env()
session = cluster.connect(keyspace)
today = datetime.now(timezone.utc).date()
print(f"{'UTC day':<12}{'source':<10}{'rows':>8}")
total = 0
for day in (today - timedelta(days=d) for d in range(3, -1, -1)):
    for row in session.execute("SELECT source FROM source_days WHERE day = %s", [day]):
        count = session.execute("SELECT count(*) FROM readings WHERE source = %s AND day = %s",
                                [row.source, day]).one()[0]
        total += count
        print(f"{day.isoformat():<12}{row.source:<10}{count:>8}")
print(f"{total} readings rows in the last 4 UTC days\n\nlatest values:")
sources = {r.source for r in session.execute("SELECT source FROM source_days WHERE day = %s", [today])}
for source in sorted(sources):
    values = ", ".join(f"{r.metric}={r.value:g}" for r in session.execute(
        "SELECT metric, value FROM latest WHERE source = %s", [source]))
    when = max(r.ts for r in session.execute("SELECT ts FROM latest WHERE source = %s", [source]))
    print(f"  {source:<8} at {when:%H:%M:%S} UTC  {values}")
cluster.shutdown()
