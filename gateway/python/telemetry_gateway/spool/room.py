"""Room for the spool (gateway/contract/spool.md, "Room" and "Full disk"): the cap, the reserve file beside the
spool, what a full disk gets back from the spool file, and the checkpoints that copy the WAL into it.

The cap (max_bytes) is where reading pauses (room() says "cap"); SQLite's own max_page_count sits a headroom above
it, so frames already read still fit. A full disk is met with the reserve (RESERVE_BYTES, preallocated), given up
in two parts: when a commit of new frames finds the disk full, all but DRAIN_RESERVE_BYTES of it goes and the
commit is retried, so what was read is kept; the rest goes only to delete acknowledged frames or to open the
spool, so a spool on a disk that stays full still drains, even after a restart. Reading stays paused (room() says
"disk") until the disk has room for the whole reserve again plus a margin. A low disk also has the WAL cut to
nothing after every commit (and at every room check), since a WAL keeps its largest size (journal_size_limit trims
it only when it restarts), and a drained spool gives its free pages back (VACUUM) before reading resumes.

A WAL can only be cut once the database file took its pages, and pages past the file's end make the file grow:
on a disk with no room left that checkpoint fails, and the WAL, which holds the room, stays. So a checkpoint
refused for lack of room gets the reserve's room (its last part too), and the last part is made again from the
room the cut WAL gave back.

Checkpoints run on a connection of their own, called by a thread of their own: SQLite's automatic checkpoint would
run inside whichever commit crosses 1,000 WAL pages and hold that group's frames for the copy and its fsync.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

from ..contract_constants import contract_number
from .safe_seqs import Seqs
from .schema import BUSY_TIMEOUT_MS, connect
from .store import NewFrame, SpooledFrame, SpoolFull, Store, disk_free, no_room

RESERVE_BYTES = contract_number("reserve_bytes")
# The reserve's last part: WAL room for deleting acknowledged frames (in steps).
DRAIN_RESERVE_BYTES = contract_number("reserve_last_part_bytes")
# Free beyond the reserve before reading resumes: room for a while, not a flutter.
ROOM_MARGIN_BYTES = contract_number("room_margin_bytes")
# Above the cap, for frames read before reading paused: the inputs' credits (credits.py), a few 16 KiB reads each.
CAP_HEADROOM = contract_number("cap_headroom_bytes")
NO_PAGE_LIMIT = 2**31 - 2  # SQLite's largest max_page_count
# Of the reserve's last part, given at a time to open the spool on a full disk.
OPEN_STEP_BYTES = contract_number("reserve_open_step_bytes")
# Room checks (5 s) a drained spool tries to shrink before reading resumes anyway.
GIVE_BACK_TRIES = contract_number("give_back_checks")
# Acknowledged frames deleted per transaction on a full disk: a few pages of WAL.
DELETE_STEP_FRAMES = contract_number("delete_step_frames")


class Reserve:
    """The reserve file at path (the spool's path + ".reserve")."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def keep(self, margin: int, size: int = RESERVE_BYTES) -> bool:
        """The reserve file holds size bytes, or is made so now, and the disk has room for margin bytes more."""
        kept = self.size()  # what is left of it after a full disk took a part
        lacking = max(0, size - kept)
        if (lacking or margin) and disk_free(self.path) < lacking + margin:
            return False
        if not lacking:
            return True
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                os.posix_fallocate(fd, 0, size)  # real blocks: a sparse file would reserve nothing
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError:
            if kept:
                os.truncate(self.path, kept)  # the part it had is still the drain's
            else:
                self.path.unlink(missing_ok=True)
            return False
        return True

    def release_for_open(self) -> bool:
        """Room for opening the spool (its WAL index, a first write): the part above the last one, else
        OPEN_STEP_BYTES of the last part (the rest stays for the drain); False if there was none."""
        size = self.size()
        return self.release(DRAIN_RESERVE_BYTES if size > DRAIN_RESERVE_BYTES else max(0, size - OPEN_STEP_BYTES))

    def release(self, keep: int) -> bool:
        """Gives the reserve's room beyond keep bytes to the disk; False if there was none."""
        try:
            if self.path.stat().st_size <= keep:
                return False
            if keep:
                os.truncate(self.path, keep)
            else:
                self.path.unlink()
        except FileNotFoundError:
            return False
        return True


class Room:
    def __init__(self, store: Store, reserve: Reserve, max_bytes: int) -> None:
        self._store = store
        self._reserve = reserve
        self._checkpointer = connect(store.path)
        self._checkpointer_lock = threading.Lock()
        self.checkpointed = (0, time.monotonic())  # rows changed and the time at the last checkpoint
        self._used_pages_at = -1  # store.changes when the pages in use were last counted
        self._given_back_at = -1  # store.changes when a drained spool last gave its free pages back
        self._give_back_tries = 0
        self._used_pages_cached = 0
        # The cap is where reading pauses (room()); SQLite's limit, above it, refuses a write like a full disk.
        self._cap_pages = max(16, max_bytes // store.page_size)
        self._set_page_limit(self._cap_pages + CAP_HEADROOM // store.page_size)
        self._frames_keep = DRAIN_RESERVE_BYTES  # what a commit of new frames leaves of the reserve (0 at a stop)
        self.disk_low = not self.keep_reserve()  # no room for the reserve (and its margin) at the last look

    def _set_page_limit(self, pages: int) -> None:
        self._store.db.execute(f"PRAGMA max_page_count = {pages}")

    def room(self) -> str | None:
        """None while reading may go on; "cap" when the spool holds max_bytes, "disk" while its disk has no room
        for the reserve (and a margin, waived for a drained spool)."""
        if self.disk_low:
            # A drained spool shrinks before reading resumes (once per change: VACUUM writes the pages in use).
            if self._store.depth == 0 and self._given_back_at != self._store.changes:
                if not self._give_back_free_pages():
                    self._give_back_tries += 1
                    if self._give_back_tries < GIVE_BACK_TRIES:
                        return "disk"  # a reader in the way: tried again at the next room check
                    self._given_back_at = self._store.changes
                self._give_back_tries = 0
            else:
                self.cut_wal()
            self.disk_low = not self.keep_reserve()
            if self.disk_low:
                return "disk"
        with self._store.lock:
            return "cap" if self._used_pages() >= self._cap_pages else None

    def lift_cap(self) -> None:
        """At shutdown: frames already read go in past the cap rather than being lost."""
        with self._store.lock:
            self._set_page_limit(NO_PAGE_LIMIT)

    def used_bytes(self) -> int:
        with self._store.lock:
            return self._used_pages() * self._store.page_size

    def _used_pages(self) -> int:
        """Asked on every read's commit and every second: counted again only after a write changed the file."""
        if self._used_pages_at != self._store.changes:
            self._used_pages_at = self._store.changes
            pages = self._store.db.execute("PRAGMA page_count").fetchone()[0]
            self._used_pages_cached = pages - self._store.db.execute("PRAGMA freelist_count").fetchone()[0]
        return self._used_pages_cached

    def keep_reserve(self) -> bool:
        """Whether the reserve is in place for reading to go on. The margin is waived once the file holds no
        frame: on a small disk a drained spool may never leave that much."""
        return self._reserve.keep(ROOM_MARGIN_BYTES if self._store.depth else 0)

    def release_reserve(self, keep: int) -> bool:
        """Gives the reserve's room beyond keep bytes to the spool; False if there was none. Reading pauses."""
        self.disk_low = True
        return self._reserve.release(keep)

    def commit(self, frames: list[NewFrame] | list[SpooledFrame], acked: list[tuple[int, int]],
               receipt_stamps: dict[str, int] | None, seqs: Seqs | None = None) -> None:
        """The store's commit (under its lock), with the full disk's remedies."""
        try:
            self._store.commit(frames, acked, receipt_stamps, seqs)
        except SpoolFull as full:
            if full.cap_reached:
                raise
            # Without new frames (deletes, stamps, seqs) the first part goes first too, the last only if need be.
            rest = DRAIN_RESERVE_BYTES if self._reserve.size() > DRAIN_RESERVE_BYTES else 0
            if self.release_reserve(keep=self._frames_keep if frames else rest):
                self._cut_wal()  # the WAL's pages into the file first: the retried commit starts a new WAL
                try:
                    self._store.commit(frames, acked, receipt_stamps, seqs)
                    self._cut_wal()
                    return
                except SpoolFull as again:
                    full = again
            if acked:
                self.release_reserve(keep=0)
                self._delete_in_steps(acked)
            if frames or receipt_stamps or seqs:
                raise full from None
        if self.disk_low:  # the WAL never holds more than one commit that the file has not taken
            self._cut_wal()

    def stopping(self) -> None:
        """At a stop the frames already read may take the reserve's last part too: nothing reads after them."""
        self._frames_keep = 0

    def _delete_in_steps(self, acked: list[tuple[int, int]]) -> None:
        """On a disk with no room left, deletes acknowledged frames a few pages at a time, cutting the WAL back
        after each step: the one transaction deleting them all may need more WAL than the disk has, and would
        only grow while it keeps failing. Stops at the first step that does not fit; deleting again is harmless."""
        self._cut_wal()  # a WAL that filled the disk first gives its room back
        for first, last in acked:
            for start in range(first, last + 1, DELETE_STEP_FRAMES):
                try:
                    self._store.delete_range(start, min(last, start + DELETE_STEP_FRAMES - 1))
                except (sqlite3.OperationalError, OSError):
                    return
                self._cut_wal()

    def cut_wal(self) -> bool:
        """On a low disk, copies the WAL into the database and cuts it to nothing: the WAL of a spool that grew
        while Cassandra was away can hold most of the disk. False if readers (or the disk) did not let it."""
        with self._store.lock:
            return self._cut_wal()

    def _cut_wal(self) -> bool:
        """cut_wal() under the writer's lock. A checkpoint refused for lack of room (the file must grow to take
        the WAL's newest pages) is given the reserve, its last part too; the cut WAL holds at least the room the
        file grew by, so the last part is made again from it."""
        outcome = self._checkpoint_truncate()
        if outcome == "no room":
            for keep in (DRAIN_RESERVE_BYTES, 0):
                if self.release_reserve(keep):
                    outcome = self._checkpoint_truncate()
                    if outcome != "no room":
                        break
            if outcome == "done":
                self._reserve.keep(0, DRAIN_RESERVE_BYTES)
        return outcome == "done"

    def _give_back_free_pages(self) -> bool:
        """A drained spool on a low disk: its free pages go back to the disk (VACUUM rewrites the few pages in
        use). False if the disk had no room for it yet: tried again at the next room check."""
        with self._store.lock:
            if not self._cut_wal():
                return False
            try:
                self._store.db.execute("VACUUM")
            except sqlite3.Error:
                return False
            self._used_pages_at = -1
            if not self._cut_wal():
                return False
            self._given_back_at = self._store.changes
            return True

    def _checkpoint_truncate(self) -> str:
        """"done", "busy" (a reader: tried at the next room check) or "no room" (the disk refused it)."""
        db = self._store.db
        try:
            db.execute("PRAGMA busy_timeout=0")
            busy, _pages, _copied = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error as error:
            return "no room" if no_room(str(error)) else "busy"
        finally:
            db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        return "busy" if busy else "done"

    def checkpoint(self) -> tuple[int, int]:
        """Copies the WAL into the database file without blocking commits or reads (PASSIVE): the pages of
        transactions still being read stay for the next call. With synchronous=NORMAL this is the fsync of the
        interval policy. Returns (pages in the WAL, pages checkpointed)."""
        with self._checkpointer_lock:
            self.checkpointed = (self._store.changes, time.monotonic())
            try:
                _busy, wal_pages, copied = self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            except sqlite3.OperationalError as error:
                if no_room(str(error)):  # the WAL took the disk: the room checks cut it, with the reserve
                    self.disk_low = True
                raise
        return wal_pages, copied

    def since_checkpoint(self, now: float) -> tuple[int, float]:
        """Rows changed and seconds gone since the last checkpoint."""
        changes_at, at = self.checkpointed
        return self._store.changes - changes_at, now - at

    def close(self) -> None:
        with self._checkpointer_lock:
            self._checkpointer.close()
