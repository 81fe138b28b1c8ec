"""Row checksums (gateway/contract/spool.md, "Row checksums"): the contract's vectors, every insert path storing
one, a row failing its checksum never sent (deleted, reported once), the format 5 → 6 upgrade, the salvage."""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path

import pytest

from telemetry_gateway.spool import NewFrame, Spool
from telemetry_gateway.spool.row_check import crc_bytes, crc_matches, frame_crc
from telemetry_gateway.spool.salvage import salvage
from telemetry_gateway.spool.schema import STATEMENTS

VECTORS = [json.loads(line) for line in
           (Path(__file__).resolve().parents[2] / "contract" / "vectors" / "frame_crc.jsonl").read_text().splitlines()]


def columns(case: dict) -> tuple:
    return case["source"], case["ts_ms"], case["received_ms"], case["metrics"], bytes.fromhex(case["vals"])


@pytest.mark.parametrize("case", [c for c in VECTORS if "crc" in c], ids=lambda c: c["name"])
def test_checksum_vectors(case):
    assert crc_bytes(*columns(case)).hex() == case["bytes"]
    assert frame_crc(*columns(case)) == case["crc"]
    assert crc_matches(case["crc"], *columns(case))


@pytest.mark.parametrize("case", [c for c in VECTORS if "stored_crc" in c], ids=lambda c: c["name"])
def test_read_back_vectors(case):
    assert crc_matches(case["stored_crc"], *columns(case)) is case["matches"]


def frame(n: int) -> NewFrame:
    return NewFrame.of("A-1", 1000 * n, 1000 * n + 1, (("n", float(n)), ("neg", -float(n))))


def raw_rows(path: Path) -> list[tuple]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT id, source, ts_ms, received_ms, metrics, vals, crc FROM frames ORDER BY id").fetchall()
    finally:
        db.close()


@pytest.mark.parametrize("fsync", ["batch", "interval", "deferred"])
def test_every_policy_stores_each_rows_checksum(tmp_path, fsync):
    path = tmp_path / "s.sqlite"
    spool = Spool(path, fsync=fsync)
    spool.set_link(True, True)
    spool.commit([frame(n) for n in range(1, 301)], [], {}, final=True)  # final: deferred commits what it holds
    spool.close()
    rows = raw_rows(path)
    assert len(rows) == 300
    assert all(row[6] == frame_crc(*row[1:6]) and -(1 << 31) <= row[6] < 1 << 31 for row in rows)


def test_a_row_failing_its_checksum_is_not_sent_but_deleted_and_reported_once(tmp_path):
    path = tmp_path / "s.sqlite"
    spool = Spool(path)
    spool.commit([frame(n) for n in range(1, 11)], [])
    db = sqlite3.connect(path, isolation_level=None)
    flipped = struct.pack(">2d", 4.0, -4.0)
    flipped = bytes([flipped[0] ^ 0x01]) + flipped[1:]  # one bit of the first value: structure untouched
    db.execute("UPDATE frames SET vals = ? WHERE ts_ms = 4000", (flipped,))
    db.execute("UPDATE frames SET ts_ms = 7001 WHERE ts_ms = 7000")  # a timestamp off by one
    db.close()
    taken = spool.take(0, 100)
    assert [f.ts_ms for f in taken] == [1000 * n for n in (1, 2, 3, 5, 6, 8, 9, 10)]
    assert all(f.values == (("n", f.ts_ms / 1000), ("neg", -f.ts_ms / 1000)) for f in taken)
    damaged = spool.damaged_rows()
    assert [(row[0], row[1], row[2]) for row in damaged] == [(4, b"A-1", 4000), (7, b"A-1", 7001)]
    assert spool.damaged_rows() == []
    assert spool.file_frames == 8 and len(raw_rows(path)) == 8  # deleted: the file can be emptied
    assert spool.take(0, 100) == taken and spool.damaged_rows() == []
    spool.close()


def test_a_row_with_a_checksum_and_text_that_is_not_utf8_is_damaged(tmp_path):
    path = tmp_path / "s.sqlite"
    spool = Spool(path)
    spool.commit([frame(1), frame(2)], [])
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("UPDATE frames SET source = CAST(X'412DFF' AS TEXT) WHERE ts_ms = 1000")
    db.close()
    assert [f.ts_ms for f in spool.take(0, 10)] == [2000]
    assert [row[0] for row in spool.damaged_rows()] == [1]
    spool.close()


def format_5(path: Path) -> None:
    """A spool as format 5 made it: frames without crc; one row in it."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    db.execute("CREATE TABLE frames (id INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT NOT NULL, ts_ms INTEGER NOT "
               "NULL, received_ms INTEGER NOT NULL, metrics TEXT NOT NULL, vals BLOB NOT NULL)")
    for statement in STATEMENTS:  # the other tables as they are (format 5 had them); frames exists already
        db.execute(statement.replace("user_version = 6", "user_version = 5"))
    db.execute("INSERT INTO frames (source, ts_ms, received_ms, metrics, vals) VALUES ('A-1', 1000, 1001, 'n,neg', ?)",
               (struct.pack(">2d", 1, -1),))
    db.execute("COMMIT")
    assert "crc" not in [row[1] for row in db.execute("PRAGMA table_info(frames)")]
    db.close()


def test_a_format_5_spool_gets_the_column_its_old_rows_are_sent_unchecked(tmp_path):
    path = tmp_path / "s.sqlite"
    format_5(path)
    spool = Spool(path)
    spool.commit([frame(2)], [])
    assert [(f.ts_ms, f.values) for f in spool.take(0, 10)] == [(1000, (("n", 1.0), ("neg", -1.0))),
                                                                 (2000, (("n", 2.0), ("neg", -2.0)))]
    spool.close()
    rows = raw_rows(path)
    assert rows[0][6] is None and rows[1][6] == frame_crc(*rows[1][1:6])
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 6
    db.close()


def test_the_salvage_keeps_rows_whose_checksum_matches_or_is_null(tmp_path):
    path = tmp_path / "s.sqlite"
    spool = Spool(path)
    spool.commit([frame(n) for n in range(1, 6)], [])
    spool.close()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("UPDATE frames SET vals = ? WHERE ts_ms = 2000", (struct.pack(">2d", 2.0, 0.0),))  # torn: zeros
    db.execute("UPDATE frames SET crc = NULL WHERE ts_ms = 3000")
    db.execute("UPDATE frames SET crc = 'x' WHERE ts_ms = 4000")  # a damaged cell of another type
    db.close()
    frames = salvage(path).tables["frames"]
    assert frames.invalid == 2
    assert [(row[2], row[6]) for row in frames.rows] == [(1000, frame_crc(*raw_rows(path)[0][1:6])), (3000, None),
                                                         (5000, frame_crc(*raw_rows(path)[4][1:6]))]
