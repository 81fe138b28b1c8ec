"""Gateway conformance, the room board's CSV lines (firmware/protocol/PROTOCOL.md section 7): a port configured as
format = "csv" at 9600 baud stores each good line's fields as the configured metrics of its source, stamped on
receipt, and counts every bad line as a reject without storing it."""

from __future__ import annotations

import time
from datetime import timezone

import pytest

from telemetry_board_sim import room_csv_line
from telemetry_conformance import Board, GatewayUnderTest, utc_days_around_now, wait_for
from telemetry_conformance.scenario_fixtures import db, keyspace  # noqa: F401 (fixtures)

pytestmark = pytest.mark.cassandra

SOURCE = "room"
COLUMNS = ["light", "temperature"]
# (light, temperature, line ending): the board's println ends lines with CR LF; LF alone must work too. The same
# reading twice in a row is two readings: CSV lines have no seq, so nothing is a duplicate.
GOOD = [(57, 21.5, b"\r\n"), (0, -3.25, b"\n"), (100, -17.06, b"\r\n"), (12, 0.0, b"\n"), (33, 19.75, b"\r\n"),
        (33, 19.75, b"\r\n"), (1, -0.5, b"\n")]
BAD = [(b"57\r\n", "csv_column_count"), (b"57,21.50,1\n", "csv_column_count"), (b",21.50\r\n", "csv_empty_field"),
       (b"57,nan\r\n", "csv_bad_number"), (b"57,inf\n", "csv_bad_number"), (b"57,abc\r\n", "csv_bad_number"),
       (b"57," + b"1" * 250 + b"\r\n", "too_long")]


@pytest.fixture
def room_gateway(tmp_path, keyspace, cassandra_node):
    board = Board(tmp_path / "ttyACM0")
    port = {"path": board.link, "baud": 9600, "format": "csv", "source": SOURCE, "columns": COLUMNS}
    gateway = GatewayUnderTest.configure(tmp_path, [port], keyspace, cassandra_node)
    yield board, gateway
    if gateway.process is not None and gateway.process.poll() is None:
        gateway.kill()


def stored_readings(session) -> dict[int, dict[str, float]]:
    """{ts ms: {metric: value}} of every row of the room source."""
    rows: dict[int, dict[str, float]] = {}
    for day in utc_days_around_now():
        for row in session.execute("SELECT metric, ts, value FROM readings WHERE source = %s AND day = %s",
                                   [SOURCE, day]):
            ts = int(row.ts.replace(tzinfo=timezone.utc).timestamp() * 1000)
            rows.setdefault(ts, {})[row.metric] = row.value
    return rows


def test_room_board_lines_become_receipt_stamped_rows_and_bad_lines_counted_rejects(db, room_gateway):
    board, gateway = room_gateway
    gateway.start()
    sent_ms = []  # wall clock just before each good line was written: its receipt stamp cannot be earlier
    for (light, temperature, ending), (bad, _reason) in zip(GOOD, BAD):
        sent_ms.append(int(time.time() * 1000))
        board.write(room_csv_line(light, temperature, ending))
        time.sleep(0.05)
        board.write(bad)
        time.sleep(0.05)
    # Two lines in one write (most likely one read, sharing their received time): still two rows, two stamps.
    together = [(20, 22.25, b"\r\n"), (21, -22.25, b"\r\n")]
    sent_ms += [int(time.time() * 1000)] * 2
    board.write(b"".join(room_csv_line(*line) for line in together))
    good = GOOD + together

    wait_for(lambda: len(stored_readings(db)) >= len(good), 60, f"{len(good)} room readings in Cassandra")
    done_ms = int(time.time() * 1000)
    wait_for(lambda: gateway.metric("telemetry_gateway_frames_accepted_total", format="csv") == len(good), 10,
             "frames_accepted{format=csv}")
    time.sleep(0.5)  # anything wrongly stored would have landed by now
    rows = stored_readings(db)

    stamps = sorted(rows)
    assert [rows[ts] for ts in stamps] == [{"light": float(light), "temperature": temperature}
                                           for light, temperature, _ in good]
    assert all(earlier < later for earlier, later in zip(stamps, stamps[1:]))  # strictly increasing
    for ts, sent in zip(stamps, sent_ms):
        assert sent <= ts <= done_ms, (ts, sent, done_ms)

    expected_rejects: dict[str, int] = {}
    for _line, reason in BAD:
        expected_rejects[reason] = expected_rejects.get(reason, 0) + 1
    for reason, count in expected_rejects.items():
        assert gateway.metric("telemetry_gateway_rejects_total", reason=reason) == count, reason
    assert gateway.metric("telemetry_gateway_lines_read_total", input=str(board.link)) == len(good) + len(BAD)
    # No seq: never a duplicate, a gap or a restart.
    for name in ("duplicates", "seq_missing_frames", "board_restarts", "seq_conflicts"):
        assert gateway.metric(f"telemetry_gateway_{name}_total", source=SOURCE) == 0, name
    assert gateway.stop() == 0
