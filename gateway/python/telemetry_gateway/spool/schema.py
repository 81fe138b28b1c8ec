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

from ..reading_values import pack_values

SPOOL_SQL = Path(__file__).parent.parent / "contract" / "spool.sql"
BUSY_TIMEOUT_MS = 5000
WAL_KEEP_BYTES = 1 << 20  # what the WAL file is cut back to when it restarts
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
    """Sets up the writer connection and brings the file to FORMAT_VERSION. Nothing here writes to a spool that is
    already set up, so it opens on a full disk."""
    if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={synchronous}")
    db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints run on their own schedule, off the commit path
    # A WAL is reused, not shrunk, after a checkpoint: without a limit it keeps its largest size on the disk.
    db.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
    _upgrade_format(db, path)
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"frames", "receipt_stamps", "source_seqs", "source_counters"} <= tables:  # new, format 2 or 3
        db.execute("BEGIN IMMEDIATE")
        _create_tables(db)
        db.execute("COMMIT")
    if db.execute("PRAGMA user_version").fetchone()[0] != FORMAT_VERSION:
        db.execute(f"PRAGMA user_version = {FORMAT_VERSION}")


def _upgrade_format(db: sqlite3.Connection, path: Path) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > FORMAT_VERSION:
        raise SpoolFormatError(f"{path} is spool format {version}; this gateway reads up to "
                               f"{FORMAT_VERSION}: upgrade the gateway or move the file away")
    columns = [row[1] for row in db.execute("PRAGMA table_info(frames)")]
    if columns and "metrics" not in columns:  # format 1: values as JSON text; converted once, in place
        db.execute("BEGIN IMMEDIATE")
        db.execute("ALTER TABLE frames RENAME TO frames_format1")
        _create_tables(db)
        old = db.execute("SELECT id, source, ts_ms, received_ms, vals FROM frames_format1").fetchall()
        # Copied without a checksum (NULL: unchecked), as every row written before checksums.
        db.executemany("INSERT INTO frames (id, source, ts_ms, received_ms, metrics, vals) VALUES (?, ?, ?, ?, ?, ?)",
                       [(i, s, ts, r, *pack_values(tuple((k, float(v)) for k, v in json.loads(vals))))
                        for i, s, ts, r, vals in old])
        db.execute("DROP TABLE frames_format1")
        db.execute("COMMIT")
    counters = [row[1] for row in db.execute("PRAGMA table_info(source_counters)")]
    if counters and "key_fingerprint" not in counters:  # format 4: counters not yet bound to their keys
        db.execute("BEGIN IMMEDIATE")
        db.execute(ADD_KEY_FINGERPRINT)
        db.execute("PRAGMA user_version = 5")
        db.execute("COMMIT")
    if columns and "crc" not in [row[1] for row in db.execute("PRAGMA table_info(frames)")]:  # format 5 or older
        db.execute("BEGIN IMMEDIATE")
        db.execute(ADD_CRC)
        db.execute("PRAGMA user_version = 6")
        db.execute("COMMIT")


def _create_tables(db: sqlite3.Connection) -> None:
    """Runs gateway/contract/spool.sql (tables if not there, format version) in the caller's transaction."""
    for statement in STATEMENTS:
        db.execute(statement)


create_tables = _create_tables  # for a spool rebuilt from a damaged one (recovery.py)
