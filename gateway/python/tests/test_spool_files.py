"""A spool file as the contract fixes it (spool.sql, spool.md), so that either gateway reads what the other wrote:
gateway/contract/vectors/spool_files.jsonl. Written here, the file read with plain sqlite3 holds exactly the
expected rows, stamps and last id, with spool.sql's tables, column types and format version; a file made from
spool.sql and plain SQL with those rows is read here row for row, and new frames go on after its last id."""

import json
import sqlite3
from pathlib import Path

import pytest

from telemetry_gateway.spool import NewFrame, Spool

CONTRACT = Path(__file__).resolve().parents[2] / "contract"
VECTORS = [json.loads(line) for line in (CONTRACT / "vectors" / "spool_files.jsonl").read_text().splitlines()]
SPOOL_SQL = (CONTRACT / "spool.sql").read_text()
TYPES = [("integer", "text", "integer", "integer", "text", "blob", "integer")]


def new_frame(source: str, ts_ms: int, received_ms: int, values: list) -> NewFrame:
    # "NaN", "Infinity", "-Infinity": the values JSON cannot hold (README, reading_values.jsonl)
    return NewFrame.of(source, ts_ms, received_ms, tuple((name, float(value)) for name, value in values))


def tables(db: sqlite3.Connection) -> list:
    return db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()


@pytest.mark.parametrize("case", VECTORS, ids=lambda c: c["name"])
def test_the_file_written_holds_the_contracts_rows(case, tmp_path):
    spool = Spool(tmp_path / "s.sqlite")
    for step in case["steps"]:
        if "commit" in step:
            spool.commit([new_frame(*f) for f in step["commit"]["frames"]], [], step["commit"]["stamps"])
        else:
            spool.commit([], [tuple(step["acknowledge"])])
    spool.close()
    reference = sqlite3.connect(":memory:")
    reference.executescript(SPOOL_SQL)
    db = sqlite3.connect(tmp_path / "s.sqlite")
    try:
        rows = db.execute("SELECT id, source, ts_ms, received_ms, metrics, hex(vals), crc FROM frames ORDER BY id")
        assert [[*row[:5], row[5].lower(), row[6]] for row in rows] == case["expect"]["frames"]
        assert [list(row) for row in db.execute("SELECT source, last_ts_ms FROM receipt_stamps ORDER BY source")] \
            == case["expect"]["receipt_stamps"]
        assert db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'frames'").fetchone()[0] \
            == case["expect"]["last_id"]
        assert db.execute("SELECT DISTINCT typeof(id), typeof(source), typeof(ts_ms), typeof(received_ms), "
                          "typeof(metrics), typeof(vals), typeof(crc) FROM frames").fetchall() == TYPES
        assert tables(db) == tables(reference)
        assert db.execute("PRAGMA user_version").fetchone() == reference.execute("PRAGMA user_version").fetchone()
    finally:
        db.close()


@pytest.mark.parametrize("case", VECTORS, ids=lambda c: c["name"])
def test_a_file_with_the_contracts_rows_is_read_row_for_row(case, tmp_path):
    path = tmp_path / "s.sqlite"
    db = sqlite3.connect(path)  # as another gateway would have left it: spool.sql, then the rows
    db.executescript(SPOOL_SQL)
    with db:
        db.executemany("INSERT INTO frames (id, source, ts_ms, received_ms, metrics, vals, crc) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [(*row[:5], bytes.fromhex(row[5]), row[6]) for row in case["expect"]["frames"]])
        db.executemany("INSERT INTO receipt_stamps (source, last_ts_ms) VALUES (?, ?)", case["expect"]["receipt_stamps"])
        db.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'frames'", (case["expect"]["last_id"],))
    db.close()
    spool = Spool(path)
    try:
        taken = spool.take(0, 10**6)
        assert [[f.id, f.source, f.ts_ms, f.received_ms, f.metrics, f.vals.hex()] for f in taken] \
            == [row[:6] for row in case["expect"]["frames"]]
        assert spool.depth == len(case["expect"]["frames"])
        assert sorted(spool.last_receipt_stamps().items()) == [tuple(s) for s in case["expect"]["receipt_stamps"]]
        spool.commit([new_frame("N", 1, 2, [["x", 1]])], [])
        assert [f.id for f in spool.take(case["expect"]["last_id"], 10)] == [case["expect"]["last_id"] + 1]
    finally:
        spool.close()
