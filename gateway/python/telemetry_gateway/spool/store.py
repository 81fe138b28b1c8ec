"""The spool file's rows (gateway/contract/spool.md, "Rows" and "Writing"): the connections, the group commit of
new frames, acknowledgements, receipt stamps and seqs in one transaction, and the frames read back for the sender.

SQLite in WAL mode. The commit thread writes through one connection (under lock); the sender reads through its
own, so a commit waiting for fsync never stalls the reads. Frame ids come from AUTOINCREMENT (or from the deferred
policy, above every id given) so they only grow: the sender's cursor never skips a frame even after the file was
emptied.

sqlite3 releases the interpreter lock around every step of a statement, and a thread that takes it back beside a
busy one waits up to the switch interval: executemany() steps once per row, so frames go in by multi-row INSERTs,
one step per 128 frames.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from itertools import chain
from pathlib import Path
from typing import NamedTuple

from ..contract_constants import contract_number
from ..reading_values import pack_values, unpack_values
from .row_check import checked, with_crcs
from .safe_seqs import Seqs
from .schema import connect, open_format

# A refused commit with less than this free on the disk was refused by the disk.
DISK_FULL_BYTES = contract_number("disk_full_free_bytes")

# Rows per INSERT statement, largest first: a few fixed sizes, so their statements stay in sqlite3's cache. 128
# rows are 768 variables (896 with the id), within the 999 of SQLite builds before 3.32.
_INSERT_SIZES = (128, 32, 8, 1)
_INSERT_SQL = {size: "INSERT INTO frames (source, ts_ms, received_ms, metrics, vals, crc) VALUES "
               + ",".join(["(?, ?, ?, ?, ?, ?)"] * size) for size in _INSERT_SIZES}
# Per-source rows are updated in place (an upsert keeps the rowid): INSERT OR REPLACE deletes and inserts the row,
# which rewrites the primary key's index page too, a second page in the WAL for every commit (spool.md, Writing).
_UPSERT_STAMP = ("INSERT INTO receipt_stamps (source, last_ts_ms) VALUES (?, ?) "
                 "ON CONFLICT (source) DO UPDATE SET last_ts_ms = excluded.last_ts_ms")
_UPSERT_SEQ = ("INSERT INTO source_seqs (source, seq, ts_ms) VALUES (?, ?, ?) "
               "ON CONFLICT (source) DO UPDATE SET seq = excluded.seq, ts_ms = excluded.ts_ms")
# Held frames (deferred) keep the id they were given in memory.
_INSERT_ID_SQL = {size: "INSERT INTO frames (id, source, ts_ms, received_ms, metrics, vals, crc) VALUES "
                  + ",".join(["(?, ?, ?, ?, ?, ?, ?)"] * size) for size in _INSERT_SIZES}
# Text read as bytes: the checksum is over the stored bytes, and a damaged one need not be UTF-8.
TAKE_SQL = ("SELECT id, CAST(source AS BLOB), ts_ms, received_ms, CAST(metrics AS BLOB), vals, crc FROM frames "
             "WHERE id > ? ORDER BY id LIMIT ?")


class SpoolFull(Exception):
    """No room: the spool's cap (SQLite max_page_count) or the disk itself. Nothing of the commit was written."""

    def __init__(self, message: str, cap_reached: bool) -> None:
        super().__init__(message)
        self.cap_reached = cap_reached


class NewFrame(NamedTuple):  # a tuple, in the column order of the INSERT
    source: str
    ts_ms: int
    received_ms: int
    metrics: str
    vals: bytes

    @classmethod
    def of(cls, source: str, ts_ms: int, received_ms: int, values: tuple[tuple[str, float], ...]) -> NewFrame:
        return cls(source, ts_ms, received_ms, *pack_values(values))


class SpooledFrame(NamedTuple):
    id: int  # spool row id, only ever growing
    source: str
    ts_ms: int
    received_ms: int  # when the line was read, for the delivery-latency metric
    metrics: str
    vals: bytes

    @property
    def values(self) -> tuple[tuple[str, float], ...]:
        return unpack_values(self.metrics, self.vals)


def no_room(message: str) -> bool:
    """Whether SQLite's error says the disk (or the spool's page limit) had no room."""
    return "full" in message or "disk I/O" in message


def disk_free(path: Path) -> int:
    """Bytes free for an unprivileged writer on the disk holding path."""
    stats = os.statvfs(path.parent)
    return stats.f_bavail * stats.f_frsize


class Store:
    def __init__(self, path: Path, synchronous: str) -> None:
        self.path = path
        self.synchronous = synchronous
        self.lock = threading.Lock()  # the writer connection's
        self.db = connect(path)
        try:
            open_format(self.db, path, synchronous)
        except BaseException:
            self.db.close()
            raise
        self.page_size = self.db.execute("PRAGMA page_size").fetchone()[0]
        # Signed frames' counters (spool.md, "Counters of signed frames"): written by the next commit that succeeds.
        self.counters_pending: dict[str, tuple[int, str]] = {}  # source → (counter, its key's fingerprint)
        self._reader = connect(path)
        self._reader_lock = threading.Lock()
        # Frame rows a take found failing their checksum, (id, source, ts_ms, ...) as read, not yet reported.
        self.damaged: list[tuple] = []
        self._damaged_seen: set[int] = set()  # ids of those whose delete failed: counted once
        self.depth = self.db.execute("SELECT count(*) FROM frames").fetchone()[0]  # frames in the file
        self.max_id = self.db.execute("SELECT coalesce(max(id), 0) FROM frames").fetchone()[0]
        sequence = self.db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'frames'").fetchone()
        self.next_id = max(self.max_id, sequence[0] if sequence else 0) + 1  # above every id ever given

    @property
    def changes(self) -> int:
        """Rows changed through the writer so far: the file changed when this did."""
        return self.db.total_changes

    def commit(self, frames: list[NewFrame] | list[SpooledFrame], acked: list[tuple[int, int]],
               receipt_stamps: dict[str, int] | None, seqs: Seqs | None = None) -> None:
        """One transaction: deletes acknowledged inclusive id ranges, appends frames, stores stamps and seqs.
        Raises SpoolFull (nothing written) when the disk or the page limit refused it."""
        before = self.db.total_changes
        # Counters are durable in every policy (spool.md, "Counters of signed frames"): at synchronous=NORMAL a
        # power cut could take back a counter whose frame Cassandra already has, and let its replay in.
        durable = bool(self.counters_pending) and self.synchronous != "FULL"
        if durable:
            self.db.execute("PRAGMA synchronous=FULL")
        try:
            self.db.execute("BEGIN IMMEDIATE")
            if acked:
                self.db.executemany("DELETE FROM frames WHERE id BETWEEN ? AND ?", acked)
            deleted = self.db.total_changes - before
            if frames:
                self._insert(frames)
            if receipt_stamps:
                self.db.executemany(_UPSERT_STAMP, receipt_stamps.items())
            if seqs:
                self.db.executemany(_UPSERT_SEQ, [(source, seq, ts_ms) for source, (seq, ts_ms) in seqs.items()])
            if self.counters_pending:
                self.db.executemany("INSERT OR REPLACE INTO source_counters (source, counter, key_fingerprint) "
                                    "VALUES (?, ?, ?)", [(source, *counted)
                                                         for source, counted in self.counters_pending.items()])
            self.db.execute("COMMIT")
            self.counters_pending = {}
        except (sqlite3.OperationalError, OSError) as error:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            message = str(error)
            if isinstance(error, OSError) or no_room(message):
                raise SpoolFull(message, cap_reached=disk_free(self.path) >= DISK_FULL_BYTES) from error
            raise
        finally:
            if durable:
                self.db.execute(f"PRAGMA synchronous={self.synchronous}")
        self.depth += len(frames) - deleted

    def _insert(self, frames: list[NewFrame] | list[SpooledFrame]) -> None:
        with_id = isinstance(frames[0], SpooledFrame)
        sql = _INSERT_ID_SQL if with_id else _INSERT_SQL
        rows = with_crcs(frames)  # spool.md, "Row checksums"
        start = 0
        for size in _INSERT_SIZES:
            while len(rows) - start >= size:
                self.db.execute(sql[size], list(chain.from_iterable(rows[start:start + size])))
                start += size

    def delete_range(self, first: int, last: int) -> None:
        """Deletes one inclusive id range in a transaction of its own."""
        before = self.db.total_changes
        self.db.execute("DELETE FROM frames WHERE id BETWEEN ? AND ?", (first, last))
        self.depth -= self.db.total_changes - before

    def emptied_by(self, acked: list[tuple[int, int]]) -> bool:
        """Whether deleting these acknowledged id ranges (inclusive) would leave no frame in the file."""
        if not acked or sum(last - first + 1 for first, last in acked) < self.depth:
            return False  # cheap: the ranges cannot hold every frame (a backlog being drained)
        merged: list[list[int]] = []  # a range acknowledged twice must not count its frames twice
        for first, last in sorted(acked):
            if merged and first <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], last)
            else:
                merged.append([first, last])
        in_ranges = sum(self.db.execute("SELECT count(*) FROM frames WHERE id BETWEEN ? AND ?", ids).fetchone()[0]
                        for ids in merged)
        return in_ranges >= self.depth

    def take(self, after_id: int, limit: int) -> list[SpooledFrame]:
        """The oldest committed frames with an id above after_id, through the reader's connection. A row failing its
        checksum is left out, kept in self.damaged for the caller to report, and deleted (spool.md, "Row
        checksums")."""
        with self._reader_lock:
            rows = self._reader.execute(TAKE_SQL, (after_id, limit)).fetchall()
        intact, damaged = checked(rows)
        if damaged:
            self._drop_damaged(damaged)
        return list(map(SpooledFrame._make, intact))

    def _drop_damaged(self, rows: list[tuple]) -> None:
        fresh = [row for row in rows if row[0] not in self._damaged_seen]
        self._damaged_seen.update(row[0] for row in fresh)
        self.damaged.extend(fresh)
        with self.lock:
            before = self.db.total_changes
            try:
                self.db.executemany("DELETE FROM frames WHERE id = ?", [(row[0],) for row in rows])
            except sqlite3.Error:
                return  # a full disk: skipped by every read, and counted once, until a delete succeeds
            self.depth -= self.db.total_changes - before
        self._damaged_seen.difference_update(row[0] for row in rows)

    def oldest_received_ms(self) -> int | None:
        """When the oldest frame in the file was read (the status page's age of what is not yet in Cassandra)."""
        with self._reader_lock:
            row = self._reader.execute("SELECT received_ms FROM frames ORDER BY id LIMIT 1").fetchone()
        return None if row is None else row[0]

    def newest_rows(self, table: str, columns: str, column: str, limit: int) -> list[tuple]:
        """A per-source table's newest limit rows by column (the last one the column); older ones are deleted, so
        junk sources with ever new names cannot grow the table (a full disk: pruned at a later start)."""
        rows = self.db.execute(f"SELECT {columns} FROM {table} ORDER BY {column} DESC LIMIT ?",
                               (limit + 1,)).fetchall()
        if len(rows) > limit:
            try:
                self.db.execute(f"DELETE FROM {table} WHERE {column} < ?", (rows[limit - 1][-1],))
            except sqlite3.OperationalError:
                pass
        return rows[:limit]

    def drop_oldest(self, count: int) -> int:
        """Deletes up to count of the oldest frames; returns how many."""
        before = self.db.total_changes
        self.db.execute("DELETE FROM frames WHERE id IN (SELECT id FROM frames ORDER BY id LIMIT ?)", (count,))
        dropped = self.db.total_changes - before
        self.depth -= dropped
        return dropped

    def close(self) -> None:
        with self._reader_lock:
            self._reader.close()
        with self.lock:
            try:
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass  # e.g. a full disk: the WAL keeps the frames and is checkpointed at the next start
            finally:
                self.db.close()
