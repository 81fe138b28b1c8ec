"""Opening a damaged spool (gateway/contract/spool.md, "A damaged spool"): the rows still readable go into a new
spool file, the damaged one is moved aside with a time stamp, and the gateway goes on with the new one.

The order keeps a crash in the middle harmless: the new file is built and closed under a name of its own first, the
damaged file (with its WAL) moved aside next, and the new one renamed into place last; a crash before the last
rename leaves the damaged file at the spool's path (the next start does it again) or, after the damaged file was
moved, none: then the next start renames the new one into place.
"""

from __future__ import annotations

import os
import time
from itertools import chain
from pathlib import Path
from typing import NamedTuple

from .salvage import Integrity, Salvage, TableSalvage, check, salvage
from .schema import connect, create_tables

_INSERT_ROWS = 128  # frames per INSERT statement (768 variables)
# The per-source tables taken over, by the columns read (salvage.py); named, so that a later format's added column
# keeps its default.
_SMALL_TABLES = {"receipt_stamps": ("source", "last_ts_ms"), "source_seqs": ("source", "seq", "ts_ms"),
                 "source_counters": ("source", "counter", "key_fingerprint")}


class Recovered(NamedTuple):
    """What the start found and did, for the spool_damaged line and the metrics."""
    aside: Path  # where the damaged file went
    detail: str  # what the check or SQLite said
    frames: int  # frames recovered into the new spool
    frames_invalid: int  # frames read but not matching the schema (not kept)
    frames_skipped_ids: int  # frame ids behind damaged pages: at most this many frames lost there; -1: unknown
    stamps: int
    seqs: int
    counters: int
    counters_complete: bool  # every source_counters row was read (none skipped, none invalid)


def aside_path(path: Path, now_s: float) -> Path:
    """<path>.damaged-<UTC time stamp>, e.g. spool.db.damaged-20261127T203000Z."""
    return path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(now_s))}")


def recover_if_damaged(path: Path, now_s: float | None = None, damage: str | None = None) -> Recovered | None:
    """None for a sound (or missing) spool file; else the damaged file is replaced by a new spool holding what could
    be read from it, and what happened is returned. damage: SQLite's error when opening found it (no check then)."""
    building = path.with_name(path.name + ".recovering")
    if not path.exists() and building.exists():  # the last start stopped between its renames: the new spool is whole
        os.replace(building, path)
        _sync_folder(path.parent)
    integrity = check(path) if damage is None else Integrity(False, damage)
    if integrity.ok:
        return None
    found = salvage(path)
    _remove(building)
    _build(building, found)
    aside = aside_path(path, time.time() if now_s is None else now_s)
    for suffix in ("", "-wal", "-shm"):  # the WAL keeps its name's tie to the file, so the copy aside reads whole
        if Path(f"{path}{suffix}").exists():
            os.replace(f"{path}{suffix}", f"{aside}{suffix}")
    os.replace(building, path)
    _sync_folder(path.parent)
    frames = found.tables.get("frames", TableSalvage([], 0, 0, -1))
    counters = found.tables.get("source_counters")
    return Recovered(
        aside, integrity.detail[:300], len(frames.rows), frames.invalid,
        -1 if found.unreadable else frames.skipped_ids,
        _count(found, "receipt_stamps"), _count(found, "source_seqs"), _count(found, "source_counters"),
        counters is not None and counters.invalid == 0 and counters.skipped_ranges == 0)


def _count(found: Salvage, table: str) -> int:
    return len(found.tables[table].rows) if table in found.tables else 0


def _build(path: Path, found: Salvage) -> None:
    """A new spool at path with the rows found, in one transaction, synced; closed (its WAL folded in)."""
    db = connect(path)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("BEGIN IMMEDIATE")
        create_tables(db)
        # New ids in the order read: a damaged rowid may repeat another one; the frame's meaning has no id.
        frames = [row[1:] for row in found.tables.get("frames", TableSalvage([], 0, 0, 0)).rows]
        for start in range(0, len(frames), _INSERT_ROWS):
            chunk = frames[start:start + _INSERT_ROWS]
            db.execute("INSERT INTO frames (source, ts_ms, received_ms, metrics, vals, crc) VALUES "
                       + ",".join(["(?, ?, ?, ?, ?, ?)"] * len(chunk)), list(chain.from_iterable(chunk)))
        for table, columns in _SMALL_TABLES.items():
            if table in found.tables:
                db.executemany(f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) VALUES "
                               f"({', '.join('?' * len(columns))})", found.tables[table].rows)
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except BaseException:
        db.close()
        _remove(path)
        raise
    db.close()


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _sync_folder(folder: Path) -> None:
    """The renames survive a power cut once the folder is synced."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
