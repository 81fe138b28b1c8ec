"""What `check` reads of a spool file (gateway/contract/process.md, "check"), read-only: SQLite's quick check, the
file's format as a start judges it, and every frame row checked as a send read checks it (spool.md, "Row
checksums"). Nothing in the file changes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import NamedTuple

from .row_check import checked
from .salvage import Integrity, check, failed_read, read_only, reading
from .schema import FORMAT_VERSION, table_columns
from .store import TAKE_SQL
from .upgrade_plan import upgrade_steps

_BATCH = 4096  # frame rows per read: a large spool is checked without holding it in memory


class Audit(NamedTuple):
    integrity: Integrity  # the quick check's, or the damage (or other error) the reads below met
    version: int  # the file's user_version; 0 when not read
    newer: bool  # a format newer than FORMAT_VERSION: refused by a start, its rows not read
    frames: int  # frame rows in the file
    failing: int  # of them, rows failing their checksum


def audit(path: Path) -> Audit:
    """The spool file at path (which exists), read-only."""
    integrity = check(path)
    if not integrity.ok or integrity.detail != "ok":
        return Audit(integrity, 0, False, 0, 0)
    try:
        with reading(path, read_only) as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            columns = table_columns(db)
            if upgrade_steps(version, columns, FORMAT_VERSION) is None:
                return Audit(integrity, version, True, 0, 0)
            frames, failing = _frame_rows(db, columns.get("frames"))
    except sqlite3.DatabaseError as error:
        return Audit(failed_read(error), 0, False, 0, 0)
    return Audit(integrity, version, False, frames, failing)


def _frame_rows(db: sqlite3.Connection, columns: list[str] | None) -> tuple[int, int]:
    """(frame rows, rows failing their checksum); a file older than format 6 has no checksums: only counted."""
    if columns is None:
        return 0, 0
    if "crc" not in columns:
        return db.execute("SELECT count(*) FROM frames").fetchone()[0], 0
    frames = failing = after = 0
    while rows := db.execute(TAKE_SQL, (after, _BATCH)).fetchall():
        frames += len(rows)
        failing += len(checked(rows)[1])
        after = rows[-1][0]
    return frames, failing
