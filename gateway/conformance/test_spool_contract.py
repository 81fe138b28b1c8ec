"""The spool contract (gateway/contract/spool.sql and spool.md), both ways: a spool the gateway under test
(GATEWAY_COMMAND) wrote is read and drained by plain sqlite3 code that knows only the contract, and a spool that
plain code wrote from spool.sql is drained by the gateway into Cassandra. So one gateway can take over another's
spool."""

from __future__ import annotations

import re
import sqlite3
import struct
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from conftest import connect, migrate
from telemetry_conformance import ROOT, Board, GatewayUnderTest, Stream, stored_frames, utc_days_around_now, wait_for
from telemetry_conformance.scenario_fixtures import gateways  # noqa: F401 (fixtures)
from telemetry_conformance.spool_rows import frame_crc

SPOOL_SQL = (ROOT / "gateway" / "contract" / "spool.sql").read_text()
CONTRACT_VERSION = int(re.search(r"^PRAGMA user_version = (\d+);$", SPOOL_SQL, re.MULTILINE).group(1))
HOUR_MS = 3_600_000
UNREACHABLE = {"TELEMETRY_CASSANDRA_PORT": "1"}  # nothing listens there: every frame stays in the spool


class Row(NamedTuple):
    id: int
    source: str
    ts_ms: int
    received_ms: int
    values: dict[str, float]


def create_spool(path: Path) -> sqlite3.Connection:
    """A new spool as spool.md says: WAL, then spool.sql's statements in one transaction."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(f"BEGIN IMMEDIATE;\n{SPOOL_SQL}\nCOMMIT;")
    return db


def encode(values: dict[str, float]) -> tuple[str, bytes]:
    """The metrics and vals columns: names comma-separated, values big-endian doubles."""
    return ",".join(values), struct.pack(f">{len(values)}d", *values.values())


def spooled_rows(db: sqlite3.Connection) -> list[Row]:
    rows = []
    for id_, source, ts_ms, received_ms, metrics, vals, crc in db.execute(
            "SELECT id, source, ts_ms, received_ms, metrics, vals, crc FROM frames ORDER BY id"):
        assert crc == frame_crc(source, ts_ms, received_ms, metrics, vals), f"row {id_}: checksum {crc}"
        names = metrics.split(",")
        assert len(vals) == 8 * len(names), f"row {id_}: {len(vals)} bytes of values for {len(names)} metrics"
        rows.append(Row(id_, source, ts_ms, received_ms, dict(zip(names, struct.unpack(f">{len(names)}d", vals)))))
    return rows


def drain(db: sqlite3.Connection, rows: list[Row]) -> None:
    """Deletes what was taken, by id range, in one transaction (as a gateway does once Cassandra acknowledged)."""
    db.execute("BEGIN IMMEDIATE")
    db.execute("DELETE FROM frames WHERE id BETWEEN ? AND ?", (rows[0].id, rows[-1].id))
    db.execute("COMMIT")


def values_of(n: int) -> dict[str, float]:
    """Frame n's values: exact in decimal text (as a board sends them) and as doubles."""
    return {"n": float(n), "temp_in": n / 4 - 20, "light": float(n % 101), "rh": -(n % 7) * 1.5}


def test_a_spool_the_gateway_wrote_is_read_and_drained_by_plain_sqlite(tmp_path, gateways):
    """Even frames carry an explicit t, odd ones are stamped on receipt; the gateway cannot reach Cassandra, so all
    stay spooled. Stopped (SIGTERM), its spool holds every frame, exactly as sent, in the contract's layout."""
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], "unused", "127.0.0.1")
    gateways.append(gateway)
    gateway.start(**UNREACHABLE)
    stream, count = Stream("S-1"), 200
    t_base = int(time.time() * 1000) - HOUR_MS
    before_ms = int(time.time() * 1000)
    board.write(b"".join(stream.frame(n, t=t_base + n if n % 2 == 0 else None, **{
        k: v for k, v in values_of(n).items() if k != "n"}) for n in range(1, count + 1)))
    wait_for(lambda: gateway.metric("telemetry_gateway_spool_frames") == count, 30, f"{count} frames spooled")
    after_ms = int(time.time() * 1000)
    assert gateway.stop() == 0

    db = sqlite3.connect(gateway.spool_path, isolation_level=None)
    assert db.execute("PRAGMA user_version").fetchone()[0] == CONTRACT_VERSION
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = spooled_rows(db)
    assert [row.values for row in rows] == [values_of(n) for n in range(1, count + 1)]  # in order, exact doubles
    assert [row.id for row in rows] == sorted({row.id for row in rows})
    last_stamp = -1
    for n, row in enumerate(rows, start=1):
        assert row.source == "S-1" and before_ms <= row.received_ms <= after_ms, row
        if n % 2 == 0:
            assert row.ts_ms == t_base + n, row
        else:  # the receipt time, or one above the previous stamp when frames came faster than one a ms
            assert row.ts_ms == max(row.received_ms, last_stamp + 1), row
            last_stamp = row.ts_ms
    assert dict(db.execute("SELECT source, last_ts_ms FROM receipt_stamps")) == {"S-1": last_stamp}
    drain(db, rows)
    assert db.execute("SELECT count(*) FROM frames").fetchone()[0] == 0
    db.close()

    # The gateway takes the drained spool back: ids go on growing, receipt stamps go on from the stored one.
    gateway.start(**UNREACHABLE)
    assert gateway.metric("telemetry_gateway_spool_frames") == 0
    board.write(stream.frame(count + 1, temp_in=1.5))
    wait_for(lambda: gateway.metric("telemetry_gateway_spool_frames") == 1, 30, "one more frame spooled")
    assert gateway.stop() == 0
    db = sqlite3.connect(gateway.spool_path)
    [row] = spooled_rows(db)
    db.close()
    assert row.id > rows[-1].id and row.values == {"n": count + 1.0, "temp_in": 1.5}
    assert row.ts_ms == max(row.received_ms, last_stamp + 1)


@pytest.mark.cassandra
def test_a_spool_plain_sqlite_wrote_is_drained_by_the_gateway(tmp_path, cql, fresh_keyspace, cassandra_node,
                                                             gateways):
    """300 frames (values any double, not only decimal ones) and a receipt stamp a minute ahead, written by plain
    sqlite3 from spool.sql: the gateway stores every frame's rows exactly and empties the spool; a frame it
    stamps on receipt for that source comes after the stored stamp. A row written without a checksum (NULL, as
    before format 6) is sent unchecked; a row whose checksum does not match (a value off by one bit) is not
    sent, but deleted, counted and logged."""
    assert migrate("--keyspace", fresh_keyspace).returncode == 0
    now_ms = int(time.time() * 1000)
    frames = {n: (now_ms - HOUR_MS + n * 1000, {**values_of(n), "ratio": n / 3}) for n in range(1, 301)}
    stamp_ahead = now_ms + 60_000
    spool = tmp_path / "plain" / "spool.sqlite"
    spool.parent.mkdir()
    db = create_spool(spool)
    db.execute("BEGIN IMMEDIATE")
    rows = [("P", ts, ts, *encode(values)) for ts, values in frames.values()]
    flipped = ("P", now_ms - HOUR_MS, now_ms - HOUR_MS, *encode({"n": 302.0}))
    rows.insert(100, flipped)  # among the others: a damaged row stops nothing
    crcs = [frame_crc(*row) for row in rows]
    crcs[7] = None  # written before checksums
    crcs[100] = frame_crc(*flipped[:4], struct.pack(">d", 302.0 + 2 ** -44))  # its value had a bit flipped since
    db.executemany("INSERT INTO frames (source, ts_ms, received_ms, metrics, vals, crc) VALUES (?, ?, ?, ?, ?, ?)",
                   [(*row, crc) for row, crc in zip(rows, crcs)])
    db.execute("INSERT INTO receipt_stamps (source, last_ts_ms) VALUES ('P', ?)", (stamp_ahead,))
    db.execute("COMMIT")
    db.close()

    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], fresh_keyspace, cassandra_node, spool=spool)
    gateways.append(gateway)
    gateway.start()
    board.write(Stream("P").frame(301, temp_in=2.25))  # stamped on receipt
    frames[301] = (stamp_ahead + 1, {"n": 301.0, "temp_in": 2.25})
    cluster = connect(cassandra_node)
    try:
        session = cluster.connect(fresh_keyspace)
        expected = {n: [(ts, values)] for n, (ts, values) in frames.items()}
        wait_for(lambda: stored_frames(session, "P", utc_days_around_now()) == expected, 60,
                 "the plain spool's frames in Cassandra", interval=0.5)
    finally:
        cluster.shutdown()
    wait_for(lambda: gateway.metric("telemetry_gateway_spool_frames") == 0, 30, "the spool drained")
    assert gateway.metric("telemetry_gateway_spool_invalid_frames_total") == 1
    assert gateway.stop() == 0
    assert gateway.spool_depth() == 0
    [line] = [line for line in gateway.log().splitlines() if "event=spool_frame_damaged" in line]
    assert f" source=P ts_ms={now_ms - HOUR_MS} " in line and "level=ERROR" in line, line
