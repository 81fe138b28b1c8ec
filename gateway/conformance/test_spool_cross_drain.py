"""One gateway takes over another's spool: frames the Python gateway spooled while Cassandra was unreachable are
written by the Node gateway, and the other way round. Every frame lands as exactly its rows (values and
timestamps, explicit and receipt-stamped), the spool ends empty, and a frame stamped on receipt by the second
gateway comes after the first one's last stamp. Allowed loss: none."""

from __future__ import annotations

import shlex
import time

import pytest

from telemetry_conformance import (GATEWAY_COMMANDS, Board, GatewayUnderTest, Stream, stored_frames,
                                   utc_days_around_now, wait_for)
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace  # noqa: F401 (fixtures)

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # each test runs both gateways itself
HOUR_MS = 3_600_000


def values_of(n: int) -> dict[str, float]:
    return {"temp_in": n / 4 - 20, "light": float(n % 101), "rh": -(n % 7) * 1.5}


@pytest.mark.parametrize("writer, drainer", [("python", "node"), ("node", "python")])
def test_a_spool_one_gateway_wrote_is_drained_by_the_other(tmp_path, keyspace, cassandra_node, db, gateways,
                                                           monkeypatch, writer, drainer):
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], keyspace, cassandra_node)
    gateways.append(gateway)
    monkeypatch.setenv("GATEWAY_COMMAND", shlex.join(GATEWAY_COMMANDS[writer]))
    gateway.start(TELEMETRY_CASSANDRA_PORT="1")  # nothing listens there: every frame stays in the spool
    stream, count = Stream("X-1"), 300
    t_base = int(time.time() * 1000) - HOUR_MS
    board.write(b"".join(stream.frame(n, t=t_base + n * 10 if n % 3 else None, **values_of(n))
                         for n in range(1, count + 1)))
    wait_for(lambda: gateway.metric("telemetry_gateway_spool_frames") == count, 30, f"{count} frames spooled")
    assert gateway.stop() == 0
    spooled = dict(gateway.spooled_rows())  # frame number: (ts_ms, received_ms)
    assert len(spooled) == count

    monkeypatch.setenv("GATEWAY_COMMAND", shlex.join(GATEWAY_COMMANDS[drainer]))
    gateway.start()
    last_stamp = max(ts for n, (ts, _received) in spooled.items() if n % 3 == 0)
    board.write(stream.frame(count + 1, **values_of(count + 1)))  # stamped on receipt by the second gateway
    expected = {n: [(ts, {"n": float(n), **values_of(n)})] for n, (ts, _received) in spooled.items()}
    wait_for(lambda: len(stored_frames(db, "X-1", utc_days_around_now())) == count + 1, 60,
             "every frame in Cassandra", interval=0.5)
    stored = stored_frames(db, "X-1", utc_days_around_now())
    [(late_ts, late_values)] = stored.pop(count + 1)
    assert stored == expected
    assert late_values == {"n": count + 1.0, **values_of(count + 1)} and late_ts > last_stamp
    for n in range(1, count + 1):
        if n % 3:
            assert expected[n][0][0] == t_base + n * 10
    wait_for(lambda: gateway.metric("telemetry_gateway_spool_frames") == 0, 30, "the spool drained")
    assert gateway.stop() == 0
    assert gateway.spool_depth() == 0
    assert "Traceback" not in gateway.log()
