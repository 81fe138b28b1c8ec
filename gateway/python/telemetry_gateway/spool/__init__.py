"""The durable spool: every accepted frame is committed here before it is sent, and removed only after Cassandra
acknowledged it (gateway/contract/spool.md; schema gateway/contract/spool.sql). This is the one class the rest of
the gateway uses; the parts:

- schema.py, upgrade_plan.py: the contract's spool.sql, opening a file, the steps an older format needs;
- salvage.py, recovery.py: a damaged file found at open, what is still readable in it, its replacement;
- store.py: the connections, the group commit, the rows read back for the sender;
- room.py: the cap, the reserve for a full disk, the WAL's checkpoints;
- policies.py: the durability policies (batch, interval, deferred) behind one interface, with held_frames.py,
  receipt_ceilings.py and safe_seqs.py for deferred's bookkeeping.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Callable

from . import clean_stop
from .policies import POLICIES
from .recovery import Recovered, recover_if_damaged
from .salvage import is_damage
from .room import DRAIN_RESERVE_BYTES, RESERVE_BYTES, Reserve, Room
from .safe_seqs import Seqs
from .schema import FORMAT_VERSION, SpoolFormatError
from .store import NewFrame, SpooledFrame, SpoolFull, Store, no_room

__all__ = ["DRAIN_RESERVE_BYTES", "FORMAT_VERSION", "RESERVE_BYTES", "NewFrame", "Recovered", "Spool",
           "SpoolFormatError", "SpoolFull", "SpooledFrame"]


class Spool:
    def __init__(self, path: str | Path, fsync: str = "batch", max_bytes: int = 1 << 30,
                 hold_ms: int = 200, wall_ms: Callable[[], int] | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.reserve_path = self.path.with_name(self.path.name + ".reserve")
        reserve = Reserve(self.reserve_path)
        # SQLite deletes the WAL file when its last connection closes cleanly: one left over means a crash, unless
        # the last stop was clean and only its checkpoint found no room (clean_stop.py).
        clean = clean_stop.take(self.path)
        self.unclean_stop = self.path.with_name(self.path.name + "-wal").exists() and not clean
        # A damaged file is replaced by a new spool with what could be read from it (spool.md, "A damaged spool").
        self.recovered: Recovered | None = recover_if_damaged(self.path)
        policy = POLICIES[fsync]
        try:
            self._store = Store(self.path, policy.synchronous)
        except sqlite3.DatabaseError as error:
            if is_damage(error) and self.recovered is None:  # damage the quick check did not see
                self.recovered = recover_if_damaged(self.path, damage=str(error))
            elif (not isinstance(error, sqlite3.OperationalError) or not no_room(str(error))
                  or not reserve.release_for_open()):
                raise
            self._store = Store(self.path, policy.synchronous)  # opening (the WAL index, a first write) needed room
        self._room = Room(self._store, reserve, max_bytes)
        self._policy = policy(self._store, hold_ms / 1000, wall_ms)  # wall_ms: the wall clock (tests give theirs)

    @property
    def depth(self) -> int:
        """Frames not yet acknowledged: in the file, and held in memory (deferred)."""
        return self._store.depth + self._policy.held

    @property
    def held_frames(self) -> int:
        """Frames held in memory only (deferred)."""
        return self._policy.held

    @property
    def file_frames(self) -> int:
        """Frames in the spool file (as of the last commit): what a crash keeps."""
        return self._store.depth

    @property
    def disk_low(self) -> bool:
        """The disk had no room for the reserve (and its margin) at the last look: reading pauses."""
        return self._room.disk_low

    @property
    def holding(self) -> bool:
        """Whether frames may be held in memory now (deferred): Cassandra connected, its last write succeeded and
        the spool file empty, so the sender keeps up; otherwise every frame is committed at once."""
        return self._policy.holding(self._store)

    @property
    def resuming(self) -> bool:
        """Deferred, connected and writing, but frames in the file, every one of them taken by the sender (in
        flight): holding resumes with the commit whose deletes empty the file. At a steady input that commit never
        comes if each one also adds the frames read since: the ingest lets new frames wait a moment for those
        acknowledgements instead."""
        return self._policy.resuming(self._store)

    def emptied_by(self, acked: list[tuple[int, int]]) -> bool:
        """Whether deleting these acknowledged id ranges (inclusive) would leave no frame in the file."""
        with self._store.lock:
            return self._store.emptied_by(acked)

    def set_link(self, connected: bool, write_ok: bool) -> bool:
        """The sender's link to Cassandra changed (connected; its last write succeeded). True if this makes held
        frames due now."""
        return self._policy.set_link(self._store, connected, write_ok)

    def oldest_received_ms(self) -> int | None:
        """received_ms of the oldest frame in the file; None when it has none (held frames are younger than
        hold_ms)."""
        return self._store.oldest_received_ms()

    def used_bytes(self) -> int:
        return self._room.used_bytes()

    def last_source_seqs(self, limit: int = 1000) -> Seqs:
        """The newest limit sources' last safe (seq, ts_ms), as an earlier run left them."""
        with self._store.lock:
            rows = self._store.newest_rows("source_seqs", "source, seq, ts_ms", "ts_ms", limit)
        return {source: (seq, ts_ms) for source, seq, ts_ms in rows}

    def last_counters(self) -> dict[str, int]:
        """Each source's last accepted counter of signed frames, as earlier runs left them."""
        with self._store.lock:
            return dict(self._store.db.execute("SELECT source, counter FROM source_counters"))

    def last_counter_keys(self) -> dict[str, str]:
        """The fingerprint of the key each stored counter belongs to ('': a row written before fingerprints)."""
        with self._store.lock:
            return dict(self._store.db.execute("SELECT source, key_fingerprint FROM source_counters"))

    def last_receipt_stamps(self, limit: int = 1000) -> dict[str, int]:
        """The newest limit sources' last receipt stamps; older rows are pruned, so junk sources cannot grow the
        table (a forgotten source restarts above the newest stamp forgotten: timestamps.Stamper)."""
        with self._store.lock:
            stamps = dict(self._store.newest_rows("receipt_stamps", "source, last_ts_ms", "last_ts_ms", limit))
            self._policy.stamps_loaded(stamps, limit)
        return stamps

    def commit(self, frames: list[NewFrame], acked: list[tuple[int, int]],
               receipt_stamps: dict[str, int] | None = None, now: float | None = None, final: bool = False,
               seqs: Seqs | None = None, counters: dict[str, tuple[int, str]] | None = None) -> int:
        """One transaction: delete acknowledged frames (inclusive id ranges), append new ones, record the sources'
        last receipt stamps and (seqs: the newest per source among frames) their last safe seqs. On a full disk a
        part of the reserve is given up and the commit tried once more. Raises SpoolFull when there is no room;
        then no new frame was written (acknowledged ones may have been deleted, in steps: deleting them again is
        harmless). Deferred: while holding is safe new frames are held, and what is due is committed (final: at a
        stop, everything held). counters: signed frames' (counter, key fingerprint) accepted since the last call,
        stored by the next commit that succeeds, with the frames it holds. Returns how many frames went into the
        file."""
        now = time.monotonic() if now is None else now
        with self._store.lock:
            if counters:
                self._store.counters_pending.update(counters)
            return self._policy.commit(self._store, self._room.commit, frames, acked, receipt_stamps or {},
                                       seqs or {}, now, final)

    def flush_delay_ms(self, now: float | None = None) -> float | None:
        """Milliseconds until a commit with nothing new is due (0: now), for the idle loop; None: nothing waits."""
        return self._policy.flush_delay_ms(self._store, time.monotonic() if now is None else now)

    def room(self) -> str | None:
        """None while reading may go on; "cap" when the spool holds max_bytes, "disk" while its disk has no room
        for the reserve (and a margin, waived for a drained spool)."""
        return self._room.room()

    def lift_cap(self) -> None:
        """At shutdown: frames already read go in past the cap rather than being lost."""
        self._room.lift_cap()

    def take(self, after_id: int, limit: int) -> list[SpooledFrame]:
        """The oldest frames with an id above after_id, held (deferred) and committed together."""
        return self._policy.take(self._store, after_id, limit)

    def damaged_rows(self) -> list[tuple]:
        """The frame rows take() found failing their checksum since the last call (deleted from the file, not sent):
        (id, source, ts_ms, ...) as read, for the sender to count and log (spool.md, "Row checksums")."""
        rows, self._store.damaged = self._store.damaged, []
        return rows

    def drop_oldest(self, count: int) -> int:
        """Deletes up to count of the oldest frames (the when_full = drop_oldest policy); returns how many."""
        with self._store.lock:
            return self._store.drop_oldest(count)

    def checkpoint(self) -> tuple[int, int]:
        """Copies the WAL into the database file (room.Room.checkpoint). Returns (pages in the WAL, copied)."""
        return self._room.checkpoint()

    def checkpoint_due(self, now: float) -> bool:
        """Whether the periodic checkpoint should run now (the policy says how often)."""
        return self._policy.checkpoint_due(*self._room.since_checkpoint(now))

    def stopping(self) -> None:
        """At a stop: frames already read may take the last part of the disk's reserve (spool.md, "Full disk")."""
        self._room.stopping()

    def close(self) -> int:
        """Commits what is still held in memory (deferred; normally the ingest's last commit did), then closes,
        the WAL cut (with the reserve's room on a full disk), and leaves the clean-stop marker. Returns how many
        held frames could not be committed (a disk with no room at all): lost."""
        lost = 0
        if self._policy.held:
            self.lift_cap()
            self.stopping()
            try:
                self.commit([], [], final=True)
            except (SpoolFull, sqlite3.Error):
                lost = self._policy.held
        self._room.cut_wal()
        self._room.close()
        self._store.close()
        clean_stop.leave(self.path)
        return lost
