"""The spool's schema and format version, as the gateway contract writes them (gateway/contract/spool.sql, shipped
inside this package as contract/spool.sql): every gateway creates its spool from that one file.

The file is split into statements by SQLite's own tokenizer (sqlite3.complete_statement), and the format version
is what SQLite makes of the script's PRAGMA user_version, run once on a database in memory.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

SPOOL_SQL = Path(__file__).with_name("contract") / "spool.sql"


def split_statements(script: str) -> list[str]:
    """The script's statements, in order, each with its trailing semicolon (comments between them dropped)."""
    statements, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    if pending.strip() and not all(part.strip().startswith("--") for part in pending.splitlines() if part.strip()):
        raise ValueError(f"unterminated statement at the end of the spool schema: {pending.strip()[:80]!r}")
    return statements


def format_version(statements: list[str]) -> int:
    db = sqlite3.connect(":memory:")
    try:
        for statement in statements:
            db.execute(statement)
        return db.execute("PRAGMA user_version").fetchone()[0]
    finally:
        db.close()


STATEMENTS = split_statements(SPOOL_SQL.read_text(encoding="utf-8"))
FORMAT_VERSION = format_version(STATEMENTS)  # PRAGMA user_version; 1 (or 0) stored the values as JSON text
