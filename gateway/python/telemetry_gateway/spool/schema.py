"""The spool's schema and format version, as the gateway contract writes them (gateway/contract/spool.sql, shipped
inside this package as contract/spool.sql), and opening a spool file by gateway/contract/spool.md, "Creating and
opening": every gateway creates its spool from that one file and upgrades an older one.

The file is split into statements by SQLite's own tokenizer (sqlite3.complete_statement): executescript() would
commit first, and the statements must run inside the caller's transaction. The format version is what SQLite
makes of the script's PRAGMA user_version, run once on a database in memory.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ..contract_constants import contract_number
from ..reading_values import pack_values
from .upgrade_plan import upgrade_steps

SPOOL_SQL = Path(__file__).parent.parent / "contract" / "spool.sql"
BUSY_TIMEOUT_MS = contract_number("spool_busy_timeout_ms")
WAL_KEEP_BYTES = contract_number("spool_journal_size_limit_bytes")  # what the WAL file is cut back to when it restarts
# Format 4 → 5 (spool.md, "Upgrading"): the rows kept get '', bound to the key the gateway next starts with.
ADD_KEY_FINGERPRINT = "ALTER TABLE source_counters ADD COLUMN key_fingerprint TEXT NOT NULL DEFAULT ''"
# Format 5 → 6: the rows kept get NULL, sent unchecked (a checksum made now would vouch for damaged bytes).
ADD_CRC = "ALTER TABLE frames ADD COLUMN crc INTEGER"


class SpoolFormatError(Exception):
    """The spool file was written by a newer gateway: refuse it rather than misread it."""


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


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), usable from the thread given it."""
    return sqlite3.connect(path, isolation_level=None, check_same_thread=False)


def open_format(db: sqlite3.Connection, path: Path, synchronous: str) -> None:
    """Sets up the writer connection and brings the file to FORMAT_VERSION. A newer format is refused before
    anything is written to it; nothing here writes to a spool already in this format, so it opens on a full disk."""
    steps = _steps(db, path)  # a newer format is refused here, before the file is touched
    if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={synchronous}")
    db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints run on their own schedule, off the commit path
    # A WAL is reused, not shrunk, after a checkpoint: without a limit it keeps its largest size on the disk.
    db.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
    if steps:
        db.execute("BEGIN IMMEDIATE")
        try:  # every step and spool.sql's user_version in one transaction: a crash leaves the old format whole
            for step in _steps(db, path):  # again, under the write lock
                _STEPS[step](db)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite may have rolled it back itself (a full disk)
                db.execute("ROLLBACK")
            raise


def table_columns(db: sqlite3.Connection) -> dict[str, list[str]]:
    """Each table of the file (SQLite's own left out) → its column names, in order."""
    names = db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").fetchall()
    return {name: [row[1] for row in db.execute(f'PRAGMA table_info("{name}")')] for (name,) in names}


def _steps(db: sqlite3.Connection, path: Path) -> list[str]:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    steps = upgrade_steps(version, table_columns(db), FORMAT_VERSION)
    if steps is None:
        raise SpoolFormatError(f"{path} is spool format {version}; this gateway reads up to "
                               f"{FORMAT_VERSION}: upgrade the gateway or move the file away")
    return steps


def _copy_format1_rows(db: sqlite3.Connection) -> None:
    """Format 1's values were JSON text, [["temp_in",21.5],["light",3]]: each row copied with the same id, its
    pairs encoded, and no checksum (NULL: unchecked), as every row written before checksums."""
    old = db.execute("SELECT id, source, ts_ms, received_ms, vals FROM frames_format1").fetchall()
    db.executemany("INSERT INTO frames (id, source, ts_ms, received_ms, metrics, vals) VALUES (?, ?, ?, ?, ?, ?)",
                   [(i, s, ts, r, *pack_values(tuple((k, float(v)) for k, v in json.loads(vals))))
                    for i, s, ts, r, vals in old])
    db.execute("DROP TABLE frames_format1")


def _create_tables(db: sqlite3.Connection) -> None:
    """Runs gateway/contract/spool.sql (tables if not there, format version) in the caller's transaction."""
    for statement in STATEMENTS:
        db.execute(statement)


create_tables = _create_tables  # for a spool rebuilt from a damaged one (recovery.py)

# upgrade_plan.py's steps (spool.md, "Upgrading"), each run inside open_format's transaction.
_STEPS = {
    "frames_format1_aside": lambda db: db.execute("ALTER TABLE frames RENAME TO frames_format1"),
    "add_key_fingerprint": lambda db: db.execute(ADD_KEY_FINGERPRINT),
    "add_crc": lambda db: db.execute(ADD_CRC),
    "schema": _create_tables,
    "format1_rows_copied": _copy_format1_rows,
}
