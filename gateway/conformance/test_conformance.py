"""Gateway conformance: what any gateway implementation (GATEWAY_COMMAND) must do, end to end, with real
pseudo-terminals and the real local Cassandra. The Python gateway runs it by default; the Node gateway runs the
same file with GATEWAY_COMMAND set."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

from telemetry_board_sim import crc16_ccitt_false
from telemetry_conformance import Board, GatewayUnderTest, Stream, all_stored, stored_numbers, wait_for
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace  # noqa: F401 (fixtures)

pytestmark = pytest.mark.cassandra


@pytest.fixture
def setup(tmp_path, keyspace, cassandra_node):
    """A board on a pty and a configured (not yet started) gateway reading it."""
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], keyspace, cassandra_node)
    yield board, gateway
    if gateway.process is not None and gateway.process.poll() is None:
        gateway.kill()


def ms(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


def test_frames_through_a_pty_land_as_the_right_rows(db, setup):
    board, gateway = setup
    gateway.start()
    g, h = Stream("G"), Stream("room-2")
    explicit = ms(datetime.now(timezone.utc).replace(microsecond=0)) - 3 * 86_400_000  # three days ago
    board.write(b"\xff\x13garbage" + g.frame(1, temp_in=11.77, temp_out=-3.5))
    board.write(b"# base station ready, radio ok\n")
    board.write(h.frame(2, t=explicit, temp=21.25, light=57))
    duplicate = g.frame(3, temp_in=12.0, temp_out=-3.25)
    board.write(duplicate + duplicate)  # a radio retransmission: same source and seq; stored once
    bad = bytearray(g.frame(4, temp_in=99.0))
    g.sent.pop()  # corrupted below: never stored
    bad[10] ^= 0x01
    board.write(bytes(bad))
    board.write(b"$T1,G,1,temp_in=1e3*%04X\n" % crc16_ccitt_false(b"T1,G,1,temp_in=1e3"))  # CRC fine, value not
    before = time.time() * 1000

    session = db
    all_stored(session, g)
    rows = list(session.execute("SELECT metric, ts, value FROM readings WHERE source = 'room-2' AND day = %s",
                                [datetime.fromtimestamp(explicit / 1000, timezone.utc).date()]))
    assert sorted((r.metric, ms(r.ts.replace(tzinfo=timezone.utc)), r.value) for r in rows) == [
        ("light", explicit, 57.0), ("n", explicit, 2.0), ("temp", explicit, 21.25)]

    g_rows = {}
    for r in session.execute("SELECT metric, ts, value FROM readings WHERE source = 'G' AND day = %s "
                             "AND metric IN ('temp_in', 'temp_out')", [datetime.now(timezone.utc).date()]):
        g_rows.setdefault(r.metric, r)  # rows come newest first within a metric
    assert g_rows["temp_in"].value == 12.0 and g_rows["temp_out"].value == -3.25
    stamped = ms(g_rows["temp_in"].ts.replace(tzinfo=timezone.utc))
    assert before - 60_000 < stamped <= before + 1_000  # stamped on receipt, UTC

    def latest():  # a view of the newest values, written within a second of the readings
        rows = {(r.source, r.metric): r.value for r in session.execute(
            "SELECT * FROM latest WHERE source IN ('G', 'room-2')")}
        return rows if rows.get(("G", "temp_in")) == 12.0 and rows.get(("room-2", "temp")) == 21.25 else None
    wait_for(latest, 10, "latest to show the newest values")
    hour = datetime.fromtimestamp(before // 3_600_000 * 3600, timezone.utc)
    written = {(source, datetime.fromtimestamp(t / 1000, timezone.utc).date())
               for source, t in (("room-2", explicit), ("G", stamped))}

    def changed():  # day_changes too are written within a second of the readings (before they leave the spool)
        changes = set()
        for bucket in (hour, datetime.fromtimestamp(hour.timestamp() + 3600, timezone.utc)):  # the hour may turn
            changes |= {(r.source, r.day.date() if hasattr(r.day, "date") else r.day) for r in session.execute(
                "SELECT source, day FROM day_changes WHERE bucket = %s", [bucket])}
        return written <= changes
    wait_for(changed, 10, "day_changes to name the partitions written")
    for source, day in written:
        assert source in {r.source for r in session.execute("SELECT source FROM source_days WHERE day = %s", [day])}

    wait_for(lambda: gateway.metric("telemetry_gateway_rejects_total", reason="bad_crc") == 1, 10, "bad_crc")
    assert gateway.metric("telemetry_gateway_rejects_total", reason="bad_value") == 1
    assert gateway.metric("telemetry_gateway_duplicates_total", source="G") == 1
    assert gateway.metric("telemetry_gateway_status_lines_total", input=str(board.link)) == 1
    assert gateway.stop() == 0


def test_legacy_json_lines_land(db, setup):
    board, gateway = setup
    gateway.start()
    board.write(b'{"source": "G","destination": "C","temperaturein": 11.77,"temperatureout": 10.43,'
                b'"temperaturecheck": 15.00,"humidity": 46.00,"light": 57,"action": "N"}\r\n')
    board.write(b'{"source": "G","destination": "S","light": 99}\n')  # not for the collector
    today = datetime.now(timezone.utc).date()
    rows = wait_for(lambda: list(db.execute("SELECT metric, value FROM readings WHERE source = 'G' AND day = %s",
                                             [today])) or None, 30, "the legacy frame's rows")
    assert sorted((r.metric, r.value) for r in rows) == [
        ("humidity", 46.0), ("light", 57.0), ("temperaturecheck", 15.0), ("temperaturein", 11.77),
        ("temperatureout", 10.43)]
    assert gateway.metric("telemetry_gateway_rejects_total", reason="wrong_destination") == 1
    assert gateway.stop() == 0
    assert gateway.spool_depth() == 0  # stopped right after the rows landed: still acknowledged, not left behind


def test_sigkill_mid_stream_loses_nothing_that_reached_the_spool(db, setup):
    board, gateway = setup
    gateway.start()
    stream = Stream("G")
    for n in range(1, 3001):
        board.write(stream.frame(n, temp_in=n / 10))
        if n == 1500:
            gateway.kill()  # mid-stream, while frames are being read, spooled and sent
            spooled = gateway.spooled_numbers()
            gateway.start()  # same config, same spool
    wait_for(lambda: set(range(1501, 3001)) <= set(stored_numbers(db, "G")) or None, 60, "frames after restart")
    stored = stored_numbers(db, "G")
    assert spooled <= set(stored), f"lost {len(spooled - set(stored))} spooled frames"
    assert len(stored) == len(set(stored))  # and none twice
    assert gateway.stop() == 0


def test_unplugged_device_is_reopened_when_it_comes_back(db, setup):
    board, gateway = setup
    gateway.start()
    stream = Stream("G")
    board.write(stream.frame(1, temp_in=1.0))
    all_stored(db, stream)
    board.unplug()
    wait_for(lambda: gateway.metric("telemetry_gateway_input_up", input=str(board.link)) == 0, 10, "input down")
    time.sleep(1.5)  # a few reopen attempts against a missing device
    board = Board(board.link)
    wait_for(lambda: gateway.metric("telemetry_gateway_input_up", input=str(board.link)) == 1, 15, "input up")
    for n in range(2, 12):
        board.write(stream.frame(n, temp_in=float(n)))
    all_stored(db, stream)
    assert gateway.process.poll() is None
    assert gateway.stop() == 0
