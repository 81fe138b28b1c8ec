"""The spool is created from the contract's spool.sql, and nothing else: same tables, same columns, same version."""

import sqlite3
from pathlib import Path

import pytest

from telemetry_gateway.spool import Spool
from telemetry_gateway.spool.schema import format_version, split_statements

CONTRACT_SQL = (Path(__file__).resolve().parents[2] / "contract" / "spool.sql").read_text()


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
