"""The spool is created from the contract's spool.sql, and nothing else: same tables, same columns, same version; an
older file is upgraded by the contract's vectors, in one transaction, and a newer one refused untouched."""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from telemetry_gateway.spool import FORMAT_VERSION, Spool, SpoolFormatError, schema
from telemetry_gateway.spool.schema import format_version, split_statements, table_columns
from telemetry_gateway.spool.upgrade_plan import upgrade_steps

CONTRACT = Path(__file__).resolve().parents[2] / "contract"
CONTRACT_SQL = (CONTRACT / "spool.sql").read_text()


def layout(db: sqlite3.Connection) -> tuple:
    tables = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
    return tables, db.execute("PRAGMA user_version").fetchone()[0]


def test_a_new_spool_is_exactly_the_contracts_schema(tmp_path):
    Spool(tmp_path / "gateway.sqlite").close()
    plain = sqlite3.connect(tmp_path / "plain.sqlite")
    plain.executescript(CONTRACT_SQL)
    assert layout(sqlite3.connect(tmp_path / "gateway.sqlite")) == layout(plain)
    assert layout(plain)[1] == format_version(split_statements(CONTRACT_SQL)) > 0


def test_statements_split_a_script_and_refuse_an_unfinished_one():
    script = "-- a comment; with a semicolon\nCREATE TABLE a (x TEXT DEFAULT ';');\nPRAGMA user_version = 7;\n-- end\n"
    statements = split_statements(script)
    assert [s.splitlines()[-1] for s in statements] == ["CREATE TABLE a (x TEXT DEFAULT ';');",
                                                        "PRAGMA user_version = 7;"]
    assert format_version(statements) == 7
    with pytest.raises(ValueError, match="unterminated"):
        split_statements(script + "CREATE TABLE b (y")


# --- upgrading (gateway/contract/spool.md, "Upgrading"; vectors/spool_upgrade.jsonl) ----------------------------------
UPGRADES = [json.loads(line) for line in (CONTRACT / "vectors" / "spool_upgrade.jsonl").read_text("ascii").splitlines()]


def file_state(path: Path) -> dict:
    db = sqlite3.connect(path)
    try:
        return {"user_version": db.execute("PRAGMA user_version").fetchone()[0],
                "journal_mode": db.execute("PRAGMA journal_mode").fetchone()[0], "tables": table_columns(db)}
    finally:
        db.close()


@pytest.mark.parametrize("case", UPGRADES, ids=[case["name"] for case in UPGRADES])
def test_upgrade_vectors(case, tmp_path):
    """A file as an older (or newer) format left it → the steps planned from what it says of itself, then the file
    as the gateway leaves it after opening it (or refusing it)."""
    assert case["params"]["format"] == FORMAT_VERSION
    path, expect = tmp_path / "spool.sqlite", case["expect"]
    if case["file_sql"] is not None:
        made = sqlite3.connect(path)
        made.executescript(case["file_sql"])
        made.close()
    before = file_state(path)
    steps = upgrade_steps(before["user_version"], before["tables"], FORMAT_VERSION)
    if expect.get("refused"):
        assert steps is None
        with pytest.raises(SpoolFormatError, match=f"is spool format {expect['user_version']}; this gateway reads"):
            Spool(path)
    else:
        assert steps == expect["steps"]
        Spool(path).close()
    after = file_state(path)
    assert after == {key: expect[key] for key in ("user_version", "journal_mode", "tables")}


def test_an_upgrade_that_fails_midway_leaves_the_old_format_whole(tmp_path, monkeypatch):
    """The steps and the new user_version commit together: a failure (or a crash) in spool.sql's statements, after
    the crc column was added, leaves the file exactly as it was, format 3, its row still there."""
    [format3] = [case for case in UPGRADES if case["name"].startswith("format 3")]
    path = tmp_path / "spool.sqlite"
    old = sqlite3.connect(path)
    old.executescript(format3["file_sql"] + "INSERT INTO frames VALUES (7, 'G', 1000, 1001, 'n', x'3ff0000000000000');")
    old.close()
    before = file_state(path)

    def fails(db):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setitem(schema._STEPS, "schema", fails)
    with pytest.raises(sqlite3.OperationalError):
        Spool(path)
    assert file_state(path) == {**before, "journal_mode": "wal"} and before["user_version"] == 3
    assert sqlite3.connect(path).execute("SELECT * FROM frames").fetchall() == [(7, "G", 1000, 1001, "n",
                                                                                 bytes.fromhex("3ff0000000000000"))]


def test_run_on_a_newer_spool_logs_fatal_and_exits_1_leaving_it_untouched(tmp_path):
    """spool.md, "A newer format": the `fatal` line, the same text on stderr, exit status 1, the file as it was."""
    spool, empty = tmp_path / "newer.sqlite", tmp_path / "empty.txt"
    made = sqlite3.connect(spool)
    made.execute(f"PRAGMA user_version = {FORMAT_VERSION + 1}")
    made.close()
    empty.write_bytes(b"")
    before = file_state(spool)
    done = subprocess.run([sys.executable, "-m", "telemetry_gateway", "run", "--spool", str(spool), "--input", str(empty),
                           "--metrics-listen", ""], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TELEMETRY_CASSANDRA_PORT": "1"})
    error = f"{spool} is spool format {FORMAT_VERSION + 1}; this gateway reads up to {FORMAT_VERSION}: " \
            "upgrade the gateway or move the file away"
    assert done.returncode == 1, done.stderr
    assert f'level=ERROR event=fatal error="{error}"' in done.stderr
    assert done.stderr.endswith(f"telemetry-gateway: {error}\n")
    assert file_state(spool) == before
