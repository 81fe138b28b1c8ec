"""A damaged spool (gateway/contract/spool.md, "A damaged spool"): how it is found, and the rows still readable in it.

SQLite keeps no spare copy of a page, and the recovery extension is not reachable through the sqlite3 module (nor
through Debian's sqlite3 shell, built without the page table it needs), so the rows are read through SQL: each
table in rowid order, and where a statement fails on a damaged page the reader seeks past it (the smallest rowid a
seek reaches without an error) and goes on. What lies on the damaged pages is lost; every row read is checked
against the spool's schema before it is kept.
"""

from __future__ import annotations

import shutil
import sqlite3
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from .salvaged_rows import VALIDATORS

CHECK_ROWS = 20  # problems PRAGMA quick_check lists at most: the first ones say enough
_MAX_ROWID = (1 << 63) - 1
# Page sizes tried when the header is garbage: SQLite's default (what a spool has) first.
_PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536)

# The tables and columns taken over, each row checked by its validator (salvaged_rows.py).
# The storage class of each cell is read too: a damaged cell can hold another type than its column's.
_TABLES = {
    "frames": "id, source, ts_ms, received_ms, metrics, vals, typeof(source) || typeof(metrics) || typeof(vals)",
    "receipt_stamps": "source, last_ts_ms, typeof(source)",
    "source_seqs": "source, seq, ts_ms, typeof(source)",
    "source_counters": "source, counter, typeof(source)",
}
# Format 6 added each frame row's checksum; a row of an older file has none (NULL: kept unchecked).
_FRAMES_WITH_CRC = ("id, source, ts_ms, received_ms, metrics, vals, crc, "
                    "typeof(source) || typeof(metrics) || typeof(vals)")
# Format 5 added the key a counter was accepted under (spool.sql); a format 4 row has none, as its upgrade gives.
_COUNTERS_WITH_KEY = "source, counter, CAST(key_fingerprint AS BLOB), typeof(source) || typeof(key_fingerprint)"


class Integrity(NamedTuple):
    ok: bool
    detail: str  # "ok", or SQLite's error / the checker's first findings


class TableSalvage(NamedTuple):
    rows: list[tuple]
    invalid: int  # rows read but not matching the schema (a damaged cell): not kept
    skipped_ranges: int  # runs of rowids behind a damaged page
    skipped_ids: int  # rowids in those runs (an upper bound of the rows lost there); -1: the end is unknown


class Salvage(NamedTuple):
    tables: dict[str, TableSalvage]
    unreadable: str  # why nothing could be read at all (no schema), else ""


def is_damage(error: BaseException) -> bool:
    """Whether a SQLite error says the file is damaged (SQLITE_CORRUPT, SQLITE_NOTADB), not busy or full."""
    if not isinstance(error, sqlite3.DatabaseError):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    text = str(error)
    return "malformed" in text or "not a database" in text


def read_only(path: Path) -> sqlite3.Connection:
    """A connection that changes nothing in the file (its WAL is read, not checkpointed)."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)


def _salvage_connection(path: Path) -> sqlite3.Connection:
    """Read-only; text comes as bytes (a damaged cell may not be UTF-8: refused by the checks, not by the reader);
    writable_schema lets SQLite read a file shorter than its header says (a truncated file) instead of refusing it."""
    db = read_only(path)
    db.text_factory = bytes
    db.execute("PRAGMA writable_schema = ON")
    return db


def check(path: Path) -> Integrity:
    """The spool file's integrity by SQLite's quick check, read-only. A missing file is ok (a new spool); so is one
    that could not be checked for another reason than damage (detail: "not checked: ...")."""
    if not path.exists():
        return Integrity(True, "ok")
    try:
        with reading(path, read_only) as db:
            found = [row[0] for row in db.execute(f"PRAGMA quick_check({CHECK_ROWS})")]
    except sqlite3.DatabaseError as error:
        return failed_read(error)
    if found == ["ok"]:
        return Integrity(True, "ok")
    return Integrity(False, "; ".join(" ".join(finding.split()) for finding in found))


def failed_read(error: sqlite3.DatabaseError) -> Integrity:
    """An error of a read-only read as check reports it: damage, or "not checked: ..." (busy, no room for the WAL
    index, no permission: the open that follows reports those, not as damage)."""
    return Integrity(False, str(error)) if is_damage(error) else Integrity(True, f"not checked: {error}")


@contextmanager
def reading(path: Path, connect: Callable[[Path], sqlite3.Connection]) -> Iterator[sqlite3.Connection]:
    """A read-only connection, closed after. SQLite makes the -wal and -shm files for it when there were none: they
    are removed again (an empty WAL), since a WAL file left behind tells the next start that the last run crashed."""
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    had_wal, had_shm = wal.exists(), shm.exists()
    db = connect(path)
    try:
        yield db
    finally:
        db.close()
        if not had_wal and wal.exists() and wal.stat().st_size == 0:
            wal.unlink(missing_ok=True)
            if not had_shm:
                shm.unlink(missing_ok=True)


def salvage(path: Path) -> Salvage:
    """Every row of the spool's tables that can still be read, checked; read-only. A file whose header is garbage
    (SQLite cannot read its schema) is read again from a copy with a new header (_with_new_header)."""
    found = _salvage(path)
    if not found.unreadable:
        return found
    copy = path.with_name(path.name + ".salvage")
    try:
        for page_size in _PAGE_SIZES:
            if _with_new_header(path, copy, page_size):
                again = _salvage(copy)
                if not again.unreadable and "frames" in again.tables:
                    return again
    finally:
        for leftover in (copy, Path(f"{copy}-wal"), Path(f"{copy}-shm")):
            leftover.unlink(missing_ok=True)
    return found


def header(page_size: int, pages: int) -> bytes:
    """A database header (SQLite's file format, "The Database Header") for pages pages of page_size, in WAL mode,
    UTF-8, no free list: what any spool's header holds, less the counters SQLite only compares."""
    return struct.pack(">16sHBBBBBBIIIIIIIIIIII20xII", b"SQLite format 3\0", page_size % 65536, 2, 2, 0, 64, 32, 32,
                       1, pages, 0, 0, 1, 4, 0, 0, 1, 0, 0, 0, 1, 3040001)


def _with_new_header(path: Path, copy: Path, page_size: int) -> bool:
    """Copies the file (and its WAL) to copy with a new header for page_size; False when the size does not fit."""
    size = path.stat().st_size
    if size < page_size:
        return False
    try:
        shutil.copyfile(path, copy)
        wal = Path(f"{path}-wal")
        if wal.exists():
            shutil.copyfile(wal, f"{copy}-wal")
        with open(copy, "r+b") as file:
            file.write(header(page_size, size // page_size))
    except OSError:  # no room for the copy: what it would have read stays unread
        return False
    return True


def _salvage(path: Path) -> Salvage:
    try:
        with reading(path, _salvage_connection) as db:
            tables = {row[0].decode() for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            sequence = _sequence(db) if "sqlite_sequence" in tables else None
            columns = dict(_TABLES)
            if "frames" in tables and b"crc" in {row[1] for row in db.execute("PRAGMA table_info(frames)")}:
                columns["frames"] = _FRAMES_WITH_CRC
            if "source_counters" in tables and b"key_fingerprint" in {
                    row[1] for row in db.execute("PRAGMA table_info(source_counters)")}:
                columns["source_counters"] = _COUNTERS_WITH_KEY
            return Salvage({table: _read_table(db, table, columns[table], sequence if table == "frames" else None)
                            for table in _TABLES if table in tables}, "")
    except sqlite3.DatabaseError as error:  # whatever it is, the start goes on with an empty spool
        return Salvage({}, str(error))


def _sequence(db: sqlite3.Connection) -> int | None:
    """The highest frame id ever given (AUTOINCREMENT's record), if readable: bounds the ids lost at the end."""
    try:
        row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'frames'").fetchone()
    except sqlite3.DatabaseError:
        return None
    return row[0] if row and isinstance(row[0], int) else None


def _read_table(db: sqlite3.Connection, table: str, columns: str, last_id: int | None) -> TableSalvage:
    valid = VALIDATORS[table]
    rows: list[tuple] = []
    invalid = ranges = skipped = 0
    stream = f"SELECT rowid, {columns} FROM {table} WHERE rowid >= ? ORDER BY rowid"
    next_id = 1  # the next rowid to read; every table's rowids start at 1

    def keep(row: tuple) -> None:
        nonlocal next_id, invalid
        next_id = row[0] + 1
        checked = valid(row[1:])
        if checked:
            rows.append(checked)
        else:
            invalid += 1

    while next_id <= _MAX_ROWID:
        try:
            for row in db.execute(stream, (next_id,)):
                keep(row)
            break
        except sqlite3.DatabaseError as error:
            if not is_damage(error):
                raise
        # A statement steps ahead of the row it returns: the row at next_id may still be readable on its own.
        row = _seek(db, stream + " LIMIT 1", next_id)
        if row is None:
            break
        if row is not False:
            keep(row)
            continue
        resume = _next_readable(db, table, next_id)
        ranges += 1
        if resume is None:  # nothing readable after the damage: the end of the table is lost
            skipped = -1 if last_id is None else skipped + max(0, last_id - next_id + 1)
            break
        skipped += resume - next_id
        next_id = resume
    return TableSalvage(rows, invalid, ranges, skipped)


def _seek(db: sqlite3.Connection, sql: str, rowid: int) -> tuple | None | bool:
    """The first row at or above rowid (sql: ... WHERE rowid >= ? ... LIMIT 1); None at the end; False when the
    seek fails on damage."""
    try:
        return db.execute(sql, (rowid,)).fetchone()
    except sqlite3.DatabaseError as error:
        if not is_damage(error):
            raise
        return False


def _next_readable(db: sqlite3.Connection, table: str, failed: int) -> int | None:
    """The first rowid above failed (whose seek failed) that a seek reaches without an error, or None. Seeks into a
    damaged page fail, seeks beyond it work: probe in growing steps, then narrow down to the first seek that works."""
    sql = f"SELECT rowid FROM {table} WHERE rowid >= ? ORDER BY rowid LIMIT 1"
    bad, step = failed, 1
    while True:
        probe = min(failed + step, _MAX_ROWID)
        found = _seek(db, sql, probe)
        if found is not False:
            break
        bad = probe
        if probe == _MAX_ROWID:
            return None
        step *= 2
    good = probe
    while good - bad > 1:  # bad: a seek failed; good: it worked
        middle = (bad + good) // 2
        result = _seek(db, sql, middle)
        if result is False:
            bad = middle
        else:
            good, found = middle, result
    return None if found is None else found[0]
