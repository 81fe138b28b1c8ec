"""The durable spool: every accepted frame is committed here before it is sent, and removed only after Cassandra
acknowledged it. Its schema is the contract's gateway/contract/spool.sql (spool_schema.py), its rules are
gateway/contract/spool.md: what this file does, written for any gateway.

SQLite in WAL mode. The commit thread writes through one connection (group commit: appends and deletes of
acknowledged frames); the sender reads through its own, so a commit waiting for fsync never stalls the reads.
Checkpoints (WAL → database file) run on a third connection, called by a thread of their own: SQLite's automatic
checkpoint would run inside whichever commit crosses 1,000 WAL pages (about once a second at 1,000 frames/s) and
hold that group's frames for the time of the copy and its fsync.
Frame ids come from AUTOINCREMENT so they only grow: the sender's cursor never skips a frame even after the spool
was emptied.

Python's sqlite3 releases the interpreter lock around every step of a statement, and a thread that releases it
while others are busy waits to get it back (up to the 5 ms switch interval). executemany() steps once per row:
beside one busy thread, 5,000 inserted frames took 7.8 s instead of 18 ms. So frames go in by multi-row INSERTs,
one step per 128 frames (5.8 ms alone, 48 ms beside a busy thread). take() keeps fetchall(): taking all rows in
one JSON row avoided its steps too, but cost more than it saved (file replay -5 to -8% in 4 interleaved pairs).

Room: the cap (max_bytes) is where reading pauses (room() says "cap"); SQLite's own max_page_count sits a
headroom above it, so frames already read still fit. A full disk is met with a reserve file beside the spool
(RESERVE_BYTES, preallocated), given up in two parts: when a commit of new frames finds the disk full, all but
DRAIN_RESERVE_BYTES of it goes and the commit is retried, so what was read is kept; the rest goes only to delete
acknowledged frames or to open the spool, so a spool on a disk that stays full still drains, even after a restart.
Reading stays paused (room() says "disk") until the disk has room for the whole reserve again plus a margin. A
low disk also has the WAL checkpointed and cut to nothing, since a WAL keeps its largest size (journal_size_limit
trims it only when it restarts).

Durability ("fsync" policy):
- batch: synchronous=FULL; each group commit is fsynced before the frames count as spooled. A power cut loses
  only frames not yet committed (read from the port in the last few milliseconds).
- interval: synchronous=NORMAL; commits reach the OS at once (a killed process loses nothing committed) and are
  fsynced by the checkpoint every fsync_interval_ms (SQLite syncs the WAL before it copies it). A power cut can
  lose that interval of frames.
- deferred (the default): write-behind, as batch for what it commits, but while holding is safe (connected,
  the last write succeeded, nothing in the file) frames are held in memory (held_frames.py) and committed only
  if Cassandra has not acknowledged them within fsync_interval_ms; receipt stamps are stored as ceilings
  (receipt_ceilings.py). A crash or power cut can lose that interval of frames Cassandra had not acknowledged; a
  healthy link writes almost nothing (SD cards wear out). While holding is not safe it commits as batch does.

Each source's last safe seq is kept in source_seqs (safe_seqs.py), so the next run counts the frames a crash or
a stop cost as a seq gap.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from itertools import chain
from pathlib import Path
from typing import NamedTuple

from .held_frames import HeldFrames
from .reading_values import pack_values, unpack_values
from .receipt_ceilings import ReceiptCeilings
from .safe_seqs import SafeSeqs, Seqs
from .spool_schema import FORMAT_VERSION, STATEMENTS

RESERVE_BYTES = 1 << 20
DRAIN_RESERVE_BYTES = 256 << 10  # the reserve's last part: WAL room for deleting acknowledged frames (in steps)
ROOM_MARGIN_BYTES = 1 << 20  # free beyond the reserve before reading resumes: room for a while, not a flutter
DISK_FULL_BYTES = 1 << 20  # a refused commit with less than this free on the disk was refused by the disk
# Above the cap, for frames read before reading paused: the inputs' credits (inputs.py), a few 16 KiB reads each.
CAP_HEADROOM = 4 << 20
BUSY_TIMEOUT_MS = 5000
WAL_KEEP_BYTES = 1 << 20  # what the WAL file is cut back to when it restarts
# Deferred: the WAL of a healthy link holds only a few small commits (receipt-stamp ceilings); copying them into
# the database every second would double what reaches the SD card. It is copied once this many rows changed, or
# once a minute.
CHECKPOINT_ROWS = 256
CHECKPOINT_IDLE_S = 60.0
DELETE_STEP_FRAMES = 256  # acknowledged frames deleted per transaction on a full disk: a few pages of WAL

# Rows per INSERT statement, largest first: a few fixed sizes, so their statements stay in sqlite3's cache. 128
# rows are 640 variables, within the 999 of SQLite builds before 3.32.
_INSERT_SIZES = (128, 32, 8, 1)
_INSERT_SQL = {size: "INSERT INTO frames (source, ts_ms, received_ms, metrics, vals) VALUES "
               + ",".join(["(?, ?, ?, ?, ?)"] * size) for size in _INSERT_SIZES}
# Held frames (deferred) keep the id they were given in memory: 128 rows of 6 are 768 variables.
_INSERT_ID_SQL = {size: "INSERT INTO frames (id, source, ts_ms, received_ms, metrics, vals) VALUES "
                  + ",".join(["(?, ?, ?, ?, ?, ?)"] * size) for size in _INSERT_SIZES}


class SpoolFull(Exception):
    """No room: the spool's cap (SQLite max_page_count) or the disk itself. Nothing of the commit was written."""

    def __init__(self, message: str, cap_reached: bool) -> None:
        super().__init__(message)
        self.cap_reached = cap_reached


class SpoolFormatError(Exception):
    """The spool file was written by a newer gateway: refuse it rather than misread it."""


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


class Spool:
    def __init__(self, path: str | Path, fsync: str = "batch", max_bytes: int = 1 << 30,
                 hold_ms: int = 200) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.reserve_path = self.path.with_name(self.path.name + ".reserve")
        # SQLite deletes the WAL file when its last connection closes cleanly: one left over means a crash.
        self.unclean_stop = self.path.with_name(self.path.name + "-wal").exists()
        self._deferred = fsync == "deferred"
        try:
            self._open(fsync)
        except sqlite3.OperationalError as error:
            if not _no_room(str(error)) or not (self._release_reserve(keep=DRAIN_RESERVE_BYTES)
                                                or self._release_reserve(keep=0)):
                raise
            self._open(fsync)  # opening (the WAL index, a first write) needed room: a part of the reserve
        self._reader = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._reader_lock = threading.Lock()
        self._checkpointer = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._checkpointer_lock = threading.Lock()
        # The cap is where reading pauses (room()); SQLite's limit, above it, refuses a write like a full disk.
        self._cap_pages = max(16, max_bytes // self._page_size)
        self._max_pages = self._cap_pages + CAP_HEADROOM // self._page_size
        self._db.execute(f"PRAGMA max_page_count = {self._max_pages}")
        self._disk_depth = self._db.execute("SELECT count(*) FROM frames").fetchone()[0]
        self.disk_low = not self._keep_reserve()
        max_id = self._db.execute("SELECT coalesce(max(id), 0) FROM frames").fetchone()[0]
        sequence = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'frames'").fetchone()
        self._next_id = max(max_id, sequence[0] if sequence else 0) + 1
        self._committed_max_id = max_id
        self._taken_max_id = 0  # the highest id take() returned: the sender has every frame up to it
        self._held = HeldFrames(hold_ms / 1000)
        self._link_ok = False  # connected to Cassandra, and its last write succeeded (set_link)
        self._safe_seqs = SafeSeqs()
        self._seqs_written_at = time.monotonic()  # deferred: when source_seqs rows were last written
        self._ceilings = ReceiptCeilings(dict(self._db.execute("SELECT source, last_ts_ms FROM receipt_stamps")),
                                         max_sources=1000)

    @property
    def depth(self) -> int:
        """Frames not yet acknowledged: in the file, and held in memory (deferred)."""
        return self._disk_depth + len(self._held)

    @property
    def held_frames(self) -> int:
        """Frames held in memory only (deferred)."""
        return len(self._held)

    @property
    def file_depth(self) -> int:
        """Frames in the spool file (as of the last commit): what a crash keeps."""
        return self._disk_depth

    @property
    def holding(self) -> bool:
        """Whether frames may be held in memory now (deferred): Cassandra connected, its last write succeeded and
        the spool file empty, so the sender keeps up; otherwise every frame is committed at once."""
        return self._deferred and self._link_ok and self._disk_depth == 0

    @property
    def resuming(self) -> bool:
        """Deferred, connected and writing, but frames in the file, every one of them taken by the sender (in
        flight): holding resumes with the commit whose deletes empty the file. At a steady input that commit never
        comes if each one also adds the frames read since: the ingest lets new frames wait a moment for those
        acknowledgements instead (ingest.py)."""
        return (self._deferred and self._link_ok and self._disk_depth > 0 and not len(self._held)
                and self._taken_max_id >= self._committed_max_id)

    def emptied_by(self, acked: list[tuple[int, int]]) -> bool:
        """Whether deleting these acknowledged id ranges (inclusive) would leave no frame in the file."""
        with self._lock:
            return self._emptied_by(acked)

    def _emptied_by(self, acked: list[tuple[int, int]]) -> bool:
        if not acked or sum(last - first + 1 for first, last in acked) < self._disk_depth:
            return False  # cheap: the ranges cannot hold every frame (a backlog being drained)
        merged: list[list[int]] = []  # a range acknowledged twice must not count its frames twice
        for first, last in sorted(acked):
            if merged and first <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], last)
            else:
                merged.append([first, last])
        in_ranges = sum(self._db.execute("SELECT count(*) FROM frames WHERE id BETWEEN ? AND ?", ids).fetchone()[0]
                        for ids in merged)
        return in_ranges >= self._disk_depth

    def set_link(self, ok: bool) -> bool:
        """The sender's state: connected and its last write succeeded. True if this makes held frames due now."""
        self._link_ok = ok
        return not ok and self._deferred and len(self._held) > 0

    def _open(self, fsync: str) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._used_pages_at = -1  # total_changes when _used_pages was last counted
        self._checkpointed = (0, time.monotonic())  # total_changes and time at the last checkpoint
        self._used_pages_cached = 0
        # Nothing below writes to a spool that is already set up, so it opens on a full disk.
        if self._db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={'NORMAL' if fsync == 'interval' else 'FULL'}")
        self._db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        self._db.execute("PRAGMA wal_autocheckpoint=0")  # checkpoint() does it, off the commit path
        # A WAL is reused, not shrunk, after a checkpoint: without a limit it keeps its largest size on the disk.
        self._db.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
        self._upgrade_format()
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"frames", "receipt_stamps", "source_seqs"} <= tables:  # new, or format 2 (no source_seqs)
            self._db.execute("BEGIN IMMEDIATE")
            self._create_tables()
            self._db.execute("COMMIT")
        if self._db.execute("PRAGMA user_version").fetchone()[0] != FORMAT_VERSION:
            self._db.execute(f"PRAGMA user_version = {FORMAT_VERSION}")
        self._page_size = self._db.execute("PRAGMA page_size").fetchone()[0]

    def _upgrade_format(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > FORMAT_VERSION:
            raise SpoolFormatError(f"{self.path} is spool format {version}; this gateway reads up to "
                                   f"{FORMAT_VERSION}: upgrade the gateway or move the file away")
        columns = [row[1] for row in self._db.execute("PRAGMA table_info(frames)")]
        if columns and "metrics" not in columns:  # format 1: values as JSON text; converted once, in place
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("ALTER TABLE frames RENAME TO frames_format1")
            self._create_tables()
            old = self._db.execute("SELECT id, source, ts_ms, received_ms, vals FROM frames_format1").fetchall()
            self._db.executemany("INSERT INTO frames (id, source, ts_ms, received_ms, metrics, vals) "
                                 "VALUES (?, ?, ?, ?, ?, ?)",
                                 [(i, s, ts, r, *pack_values(tuple((k, float(v)) for k, v in json.loads(vals))))
                                  for i, s, ts, r, vals in old])
            self._db.execute("DROP TABLE frames_format1")
            self._db.execute("COMMIT")

    def _create_tables(self) -> None:
        """Runs gateway/contract/spool.sql (tables if not there, format version) in the caller's transaction."""
        for statement in STATEMENTS:
            self._db.execute(statement)

    def used_bytes(self) -> int:
        with self._lock:
            return self._used_pages() * self._page_size

    def _used_pages(self) -> int:
        """Asked on every read's commit and every second: counted again only after a write changed the file."""
        if self._used_pages_at != self._db.total_changes:
            self._used_pages_at = self._db.total_changes
            pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            self._used_pages_cached = pages - self._db.execute("PRAGMA freelist_count").fetchone()[0]
        return self._used_pages_cached

    def last_seqs(self, limit: int = 1000) -> Seqs:
        """The newest limit sources' last safe (seq, ts_ms), as an earlier run left them."""
        with self._lock:
            rows = self._db.execute("SELECT source, seq, ts_ms FROM source_seqs ORDER BY ts_ms DESC LIMIT ?",
                                    (limit + 1,)).fetchall()
            if len(rows) > limit:  # junk sources with ever new names cannot grow the table
                try:
                    self._db.execute("DELETE FROM source_seqs WHERE ts_ms < ?", (rows[limit - 1][2],))
                except sqlite3.OperationalError:
                    pass  # a full disk: pruned at a later start
        return {source: (seq, ts_ms) for source, seq, ts_ms in rows[:limit]}

    def last_receipt_stamps(self, limit: int = 1000) -> dict[str, int]:
        """The newest limit sources' last receipt stamps; older rows are pruned, so junk sources cannot grow the
        table (a forgotten source restarts above the newest stamp forgotten: timestamps.Stamper)."""
        with self._lock:
            rows = self._db.execute("SELECT source, last_ts_ms FROM receipt_stamps ORDER BY last_ts_ms DESC "
                                    "LIMIT ?", (limit + 1,)).fetchall()
            if len(rows) > limit:
                try:
                    self._db.execute("DELETE FROM receipt_stamps WHERE last_ts_ms < ?", (rows[limit - 1][1],))
                except sqlite3.OperationalError:
                    pass  # a full disk: pruned at a later start
            self._ceilings = ReceiptCeilings(dict(rows), max_sources=limit)
            return dict(rows[:limit])

    def commit(self, frames: list[NewFrame], acked: list[tuple[int, int]],
               receipt_stamps: dict[str, int] | None = None, now: float | None = None, final: bool = False,
               seqs: Seqs | None = None) -> int:
        """One transaction: delete acknowledged frames (inclusive id ranges), append new ones, record the sources'
        last receipt stamps and (seqs: the newest per source among frames) their last safe seqs. On a full disk a
        part of the reserve is given up and the commit tried once more. Raises SpoolFull when there is no room;
        then no new frame was written (acknowledged ones may have been deleted, in steps: deleting them again is
        harmless). Deferred: while holding is safe new frames are held, and what is due is committed (final: at a
        stop, everything held). Returns how many frames went into the file."""
        now = time.monotonic() if now is None else now
        if self._deferred:
            return self._commit_deferred(frames, acked, receipt_stamps or {}, seqs or {}, now, final)
        if not (frames or acked or receipt_stamps):
            return 0
        with self._lock:
            self._commit_with_room(frames, acked, receipt_stamps, seqs if frames else None)
        return len(frames)

    def _commit_deferred(self, frames: list[NewFrame], acked: list[tuple[int, int]], stamps: dict[str, int],
                         seqs: Seqs, now: float, final: bool) -> int:
        with self._lock:
            delete = [ids for ids in acked if self._held.acknowledge(*ids)]
            # Judged on the file as of the last commit, or of this one when its deletes empty the file (then the
            # new frames are held once it is done): acknowledgements ride with the next read's frames, so a file
            # emptied only by a commit of its own would keep holding off at any steady input.
            holding = not final and (self.holding or (self._deferred and self._link_ok and not len(self._held)
                                                      and self._emptied_by(delete)))
            new = [SpooledFrame(self._next_id + i, *frame) for i, frame in enumerate(frames)]
            due = self._held.due(now, everything=not holding) + ([] if holding else new)
            rows = self._ceilings.final_rows(stamps) if final else self._ceilings.rows_for(stamps)
            if new:
                self._safe_seqs.accepted(new[-1].id, seqs)
            due_ids = {frame.id for frame in due}
            lowest_held = self._held.lowest_id(due_ids)
            self._safe_seqs.release(new[0].id if holding and new and lowest_held is None else lowest_held)
            seqs_due = bool(self._safe_seqs.rows()) and (
                final or self._safe_seqs.due_s(self._seqs_written_at, now) <= 0)
            if due or delete or rows or seqs_due:
                self._commit_with_room(due, delete, rows, self._safe_seqs.rows() if seqs_due else None)
                if seqs_due:
                    self._seqs_written_at = now
                    self._safe_seqs.written()
            self._next_id += len(new)
            if due:
                self._committed_max_id = max(self._committed_max_id, due[-1].id)  # before they leave memory
                self._held.committed(due)
            if holding:
                self._held.hold(new, now)
            self._ceilings.stored(stamps, rows)
        return len(due)

    def next_due_s(self, now: float) -> float:
        """Seconds until a commit is due (deferred: a held frame, held frames while holding is not safe, seq rows
        waiting), for the idle loop's sleep; inf when nothing waits."""
        if not self._deferred:
            return float("inf")
        if len(self._held) and not self.holding:
            return 0.0
        return min(self._held.next_due_s(now), self._safe_seqs.due_s(self._seqs_written_at, now))

    def flush_due(self, now: float | None = None) -> bool:
        """Whether a commit with nothing new is due (deferred): for an otherwise idle loop."""
        return self.next_due_s(time.monotonic() if now is None else now) <= 0

    def _commit_with_room(self, frames: list[NewFrame] | list[SpooledFrame], acked: list[tuple[int, int]],
                          receipt_stamps: dict[str, int] | None, seqs: Seqs | None = None) -> None:
        try:
            self._commit_once(frames, acked, receipt_stamps, seqs)
        except SpoolFull as full:
            if full.cap_reached:
                raise
            if self._release_reserve(keep=DRAIN_RESERVE_BYTES if frames else 0):
                self._commit_once(frames, acked, receipt_stamps, seqs)
                return
            if acked:
                self._release_reserve(keep=0)
                self._delete_in_steps(acked)
            if frames or receipt_stamps or seqs:
                raise

    def _delete_in_steps(self, acked: list[tuple[int, int]]) -> None:
        """On a disk with no room left, deletes acknowledged frames a few pages at a time, cutting the WAL back
        after each step: the one transaction deleting them all may need more WAL than the disk has, and would
        only grow while it keeps failing. Stops at the first step that does not fit; deleting again is harmless."""
        for first, last in acked:
            for start in range(first, last + 1, DELETE_STEP_FRAMES):
                before = self._db.total_changes
                try:
                    self._db.execute("DELETE FROM frames WHERE id BETWEEN ? AND ?",
                                     (start, min(last, start + DELETE_STEP_FRAMES - 1)))
                except (sqlite3.OperationalError, OSError):
                    return
                self._disk_depth -= self._db.total_changes - before
                self._checkpoint_truncate()

    def _commit_once(self, frames: list[NewFrame] | list[SpooledFrame], acked: list[tuple[int, int]],
                     receipt_stamps: dict[str, int] | None, seqs: Seqs | None = None) -> None:
        before = self._db.total_changes
        try:
            self._db.execute("BEGIN IMMEDIATE")
            if acked:
                self._db.executemany("DELETE FROM frames WHERE id BETWEEN ? AND ?", acked)
            deleted = self._db.total_changes - before
            if frames:
                self._insert(frames)
            if receipt_stamps:
                self._db.executemany("INSERT OR REPLACE INTO receipt_stamps (source, last_ts_ms) VALUES (?, ?)",
                                     receipt_stamps.items())
            if seqs:
                self._db.executemany("INSERT OR REPLACE INTO source_seqs (source, seq, ts_ms) VALUES (?, ?, ?)",
                                     [(source, seq, ts_ms) for source, (seq, ts_ms) in seqs.items()])
            self._db.execute("COMMIT")
        except (sqlite3.OperationalError, OSError) as error:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            message = str(error)
            if isinstance(error, OSError) or _no_room(message):
                raise SpoolFull(message, cap_reached=self._disk_free() >= DISK_FULL_BYTES) from error
            raise
        self._disk_depth += len(frames) - deleted

    def _insert(self, frames: list[NewFrame] | list[SpooledFrame]) -> None:
        sql = _INSERT_ID_SQL if isinstance(frames[0], SpooledFrame) else _INSERT_SQL
        start = 0
        for size in _INSERT_SIZES:
            while len(frames) - start >= size:
                self._db.execute(sql[size], list(chain.from_iterable(frames[start:start + size])))
                start += size

    def room(self) -> str | None:
        """None while reading may go on; "cap" when the spool holds max_bytes, "disk" while its disk has no room
        for the reserve (and a margin, waived for a drained spool)."""
        if self.disk_low:
            self.disk_low = not self._keep_reserve()
            if self.disk_low and self._truncate_wal():
                self.disk_low = not self._keep_reserve()
            if self.disk_low and self._disk_depth == 0 and self._give_back_free_pages():
                self.disk_low = not self._keep_reserve()
            if self.disk_low:
                return "disk"
        with self._lock:
            return "cap" if self._used_pages() >= self._cap_pages else None

    def lift_cap(self) -> None:
        """At shutdown: frames already read go in past the cap rather than being lost."""
        with self._lock:
            self._max_pages = 2**31 - 2
            self._db.execute(f"PRAGMA max_page_count = {self._max_pages}")

    def _disk_free(self) -> int:
        stats = os.statvfs(self.path.parent)
        return stats.f_bavail * stats.f_frsize

    def _reserve_size(self) -> int:
        try:
            return self.reserve_path.stat().st_size
        except FileNotFoundError:
            return 0

    def _keep_reserve(self) -> bool:
        """Whether the reserve is in place for reading to go on: the whole file, made now if the disk has room for
        what it lacks and the margin. The margin is waived once the file holds no frame: on a small disk a drained
        spool may never leave that much."""
        kept = self._reserve_size()  # what is left of it after a full disk took a part
        if kept >= RESERVE_BYTES:
            return True
        if self._disk_free() < RESERVE_BYTES - kept + (ROOM_MARGIN_BYTES if self._disk_depth else 0):
            return False
        return self._allocate_reserve(kept)

    def _allocate_reserve(self, kept: int) -> bool:
        try:
            fd = os.open(self.reserve_path, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                os.posix_fallocate(fd, 0, RESERVE_BYTES)  # real blocks: a sparse file would reserve nothing
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError:
            if kept:
                os.truncate(self.reserve_path, kept)  # the part it had is still the drain's
            else:
                self.reserve_path.unlink(missing_ok=True)
            return False
        return True

    def _truncate_wal(self) -> bool:
        """On a low disk, copies the WAL into the database and cuts it to nothing: the WAL of a spool that grew
        while Cassandra was away can hold most of the disk. False if readers or the disk did not let it."""
        with self._lock:
            return self._checkpoint_truncate()

    def _give_back_free_pages(self) -> bool:
        """A drained spool on a low disk: its free pages go back to the disk (VACUUM rewrites the few pages in
        use). False if the disk had no room for it yet: tried again at the next room check."""
        with self._lock:
            try:
                self._db.execute("VACUUM")
            except sqlite3.Error:
                return False
            self._used_pages_at = -1
            return self._checkpoint_truncate()

    def _checkpoint_truncate(self) -> bool:
        try:
            self._db.execute("PRAGMA busy_timeout=0")  # a reader busy now: try at the next room check
            busy, _pages, _copied = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error:
            return False
        finally:
            self._db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        return busy == 0

    def _release_reserve(self, keep: int) -> bool:
        """Gives the reserve's room beyond keep bytes to the spool; False if there was none."""
        self.disk_low = True
        try:
            if self.reserve_path.stat().st_size <= keep:
                return False
            if keep:
                os.truncate(self.reserve_path, keep)
            else:
                self.reserve_path.unlink()
        except FileNotFoundError:
            return False
        return True

    def take(self, after_id: int, limit: int) -> list[SpooledFrame]:
        """The oldest frames with an id above after_id, held (first: one committed meanwhile shows in both) and
        committed together."""
        held = self._held.take(after_id, limit) if self._deferred else []
        if self._deferred and self._committed_max_id <= after_id:
            return self._taken(held)
        with self._reader_lock:
            rows = self._reader.execute("SELECT id, source, ts_ms, received_ms, metrics, vals FROM frames "
                                        "WHERE id > ? ORDER BY id LIMIT ?", (after_id, limit)).fetchall()
        committed = list(map(SpooledFrame._make, rows))
        if not held:
            return self._taken(committed)
        merged = {frame.id: frame for frame in committed}
        merged.update((frame.id, frame) for frame in held)
        return self._taken([merged[frame_id] for frame_id in sorted(merged)[:limit]])

    def _taken(self, frames: list[SpooledFrame]) -> list[SpooledFrame]:
        if frames and frames[-1].id > self._taken_max_id:
            self._taken_max_id = frames[-1].id
        return frames

    def drop_oldest(self, count: int) -> int:
        """Deletes up to count of the oldest frames (the when_full = drop_oldest policy); returns how many."""
        with self._lock:
            before = self._db.total_changes
            self._db.execute("DELETE FROM frames WHERE id IN (SELECT id FROM frames ORDER BY id LIMIT ?)", (count,))
            dropped = self._db.total_changes - before
        self._disk_depth -= dropped
        return dropped

    def checkpoint(self) -> tuple[int, int]:
        """Copies the WAL into the database file without blocking commits or reads (PASSIVE): the pages of
        transactions still being read stay for the next call. With synchronous=NORMAL this is the fsync of the
        interval policy. Returns (pages in the WAL, pages checkpointed)."""
        with self._checkpointer_lock:
            self._checkpointed = (self._db.total_changes, time.monotonic())
            _busy, wal_pages, copied = self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return wal_pages, copied

    def checkpoint_due(self, now: float) -> bool:
        """Whether the periodic checkpoint should run now: always, but for deferred (CHECKPOINT_ROWS)."""
        if not self._deferred:
            return True
        changes_at, at = self._checkpointed
        changed = self._db.total_changes - changes_at
        return changed >= CHECKPOINT_ROWS or (changed > 0 and now - at >= CHECKPOINT_IDLE_S)

    def close(self) -> int:
        """Commits what is still held in memory (deferred; normally the ingest's last commit did), then closes.
        Returns how many held frames could not be committed (a disk with no room at all): lost."""
        lost = 0
        if self._deferred and len(self._held):
            self.lift_cap()
            try:
                self.commit([], [], final=True)
            except (SpoolFull, sqlite3.Error):
                lost = len(self._held)
        with self._checkpointer_lock:
            self._checkpointer.close()
        with self._reader_lock:
            self._reader.close()
        with self._lock:
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass  # e.g. a full disk: the WAL keeps the frames and is checkpointed at the next start
            finally:
                self._db.close()
        return lost


def _no_room(message: str) -> bool:
    """Whether SQLite's error says the disk (or the spool's page limit) had no room."""
    return "full" in message or "disk I/O" in message
