"""FastBinder produces exactly the bytes of PreparedStatement.bind(), against the real schema."""

from datetime import date

import pytest

from conftest import migrate
from telemetry_gateway.row_binding import FastBinder

pytestmark = pytest.mark.cassandra


def test_same_bytes_as_bind_and_rows_read_back(cql, fresh_keyspace):
    assert migrate("--keyspace", fresh_keyspace).returncode == 0
    cql.set_keyspace(fresh_keyspace)
    insert = cql.prepare("INSERT INTO readings (source, day, metric, ts, value) VALUES (?, ?, ?, ?, ?)")
    binder = FastBinder(insert, cql.cluster.protocol_version, (0, 1, 2))
    rows = [("G", date(2026, 3, 29), "temp_in", 1_774_742_400_000 + i, v)
            for i, v in enumerate([11.77, -0.0, 1e300, -3.25, 57.0])]
    for row in rows:
        fast = binder.bind(row)
        assert fast.values == insert.bind(row).values
        assert fast.routing_key == insert.bind(row).routing_key  # token-aware routing still works
        cql.execute(fast)
    got = cql.execute("SELECT ts, value FROM readings WHERE source = 'G' AND day = '2026-03-29' AND metric = 'temp_in'")
    assert sorted(r.value for r in got) == sorted(v for *_, v in rows)
    cql.set_keyspace("system")
