"""The durability policies ([spool] fsync; gateway/contract/spool.md, "Durability"), behind one interface the
spool calls: what a commit writes, what take() returns, when an idle loop must commit, when to checkpoint.

- batch: synchronous=FULL; each group commit is fsynced before the frames count as spooled. A power cut loses
  only frames not yet committed.
- interval: synchronous=NORMAL; commits reach the OS at once (a killed process loses nothing committed) and are
  fsynced by the checkpoint every fsync_interval_ms (SQLite syncs the WAL before it copies it).
- deferred (the default): write-behind, so that a healthy link writes almost nothing (SD cards wear out). While
  holding is safe (connected, the last write succeeded, nothing in the file; vectors/hold.jsonl) new frames get
  their ids and are held in memory (held_frames.py); only those Cassandra has not acknowledged within
  fsync_interval_ms are committed, as batch commits. Receipt stamps are stored as ceilings (receipt_ceilings.py);
  each source's last safe seq once no held frame precedes it (safe_seqs.py). While holding is not safe every
  frame is committed at once.

A policy gets `write(frames, acked, receipt_stamps, seqs)`, the room's commit, and the store for what the file
holds; the spool calls it under the store's lock.
"""

from __future__ import annotations

import time
from typing import Callable, Protocol

from ..contract_constants import contract_number, contract_seconds
from .held_frames import HeldFrames
from .receipt_ceilings import ReceiptCeilings
from .safe_seqs import SafeSeqs, Seqs
from .store import NewFrame, SpooledFrame, Store

Write = Callable[[list, list, "dict[str, int] | None", "Seqs | None"], None]

# Deferred: the WAL of a healthy link holds only a few small commits (stamp ceilings and seqs, one a minute): each
# checkpoint writes their pages a second time, into the database file, and fsyncs both files. It is copied once
# this many rows changed, or once ten minutes passed with any change (the WAL then holds ~100 KiB).
CHECKPOINT_ROWS = contract_number("checkpoint_rows")
CHECKPOINT_IDLE_S = contract_seconds("checkpoint_idle_ms")


class Policy(Protocol):
    synchronous: str  # PRAGMA synchronous of the writer
    held: int  # frames held in memory, not in the file

    def holding(self, store: Store) -> bool: ...
    def resuming(self, store: Store) -> bool: ...
    def set_link(self, store: Store, connected: bool, write_ok: bool) -> bool: ...
    def stamps_loaded(self, stamps: dict[str, int], limit: int) -> None: ...
    def commit(self, store: Store, write: Write, frames: list[NewFrame], acked: list[tuple[int, int]],
               stamps: dict[str, int], seqs: Seqs, now: float, final: bool) -> int: ...
    def take(self, store: Store, after_id: int, limit: int) -> list[SpooledFrame]: ...
    def flush_delay_ms(self, store: Store, now: float) -> float | None: ...
    def checkpoint_due(self, changed: int, idle_s: float) -> bool: ...


class Immediate:
    """Every frame committed as it comes: what batch and interval share."""
    synchronous = "NORMAL"
    held = 0

    def __init__(self, store: Store, hold_s: float, wall_ms: Callable[[], int] | None = None) -> None:
        pass

    def holding(self, store: Store) -> bool:
        return False

    def resuming(self, store: Store) -> bool:
        return False

    def set_link(self, store: Store, connected: bool, write_ok: bool) -> bool:
        return False

    def stamps_loaded(self, stamps: dict[str, int], limit: int) -> None:
        pass

    def commit(self, store: Store, write: Write, frames: list[NewFrame], acked: list[tuple[int, int]],
               stamps: dict[str, int], seqs: Seqs, now: float, final: bool) -> int:
        if not (frames or acked or stamps or store.counters_pending):
            return 0
        write(frames, acked, stamps, seqs if frames else None)
        return len(frames)

    def take(self, store: Store, after_id: int, limit: int) -> list[SpooledFrame]:
        return store.take(after_id, limit)

    def flush_delay_ms(self, store: Store, now: float) -> float | None:
        return None

    def checkpoint_due(self, changed: int, idle_s: float) -> bool:
        return True


class Batch(Immediate):
    """Each commit fsynced inside the commit (synchronous=FULL): its frames count as spooled once it returns."""
    synchronous = "FULL"


class Interval(Immediate):
    """The commit is not fsynced: the periodic checkpoint is."""
    synchronous = "NORMAL"


class Deferred:
    synchronous = "FULL"

    def __init__(self, store: Store, hold_s: float, wall_ms: Callable[[], int] | None = None) -> None:
        self._wall_ms = wall_ms or (lambda: time.time_ns() // 1_000_000)  # the clock receipt stamps come from
        self._held = HeldFrames(hold_s)
        self._link_ok = False  # connected to Cassandra, and its last write succeeded (set_link): not yet at open
        self._next_id = store.next_id  # held frames take ids above every id the file has given
        self._committed_max_id = store.max_id
        self._taken_max_id = 0  # the highest id take() returned: the sender has every frame up to it
        self._safe_seqs = SafeSeqs(source for (source,) in store.db.execute("SELECT source FROM source_seqs"))
        self._seqs_written_at = time.monotonic()  # when source_seqs rows were last written
        self._ceilings = ReceiptCeilings(dict(store.db.execute("SELECT source, last_ts_ms FROM receipt_stamps")),
                                         max_sources=1000)

    @property
    def held(self) -> int:
        return len(self._held)

    def holding(self, store: Store) -> bool:
        return self._link_ok and store.depth == 0

    def resuming(self, store: Store) -> bool:
        return (self._link_ok and store.depth > 0 and not len(self._held)
                and self._taken_max_id >= self._committed_max_id)

    def set_link(self, store: Store, connected: bool, write_ok: bool) -> bool:
        self._link_ok = connected and write_ok
        return len(self._held) > 0 and not self.holding(store)

    def stamps_loaded(self, stamps: dict[str, int], limit: int) -> None:
        self._ceilings = ReceiptCeilings(stamps, max_sources=limit)

    def commit(self, store: Store, write: Write, frames: list[NewFrame], acked: list[tuple[int, int]],
               stamps: dict[str, int], seqs: Seqs, now: float, final: bool) -> int:
        delete = [ids for ids in acked if self._held.acknowledge(*ids)]
        # Judged on the file as of the last commit, or of this one when its deletes empty the file (then the new
        # frames are held once it is done): acknowledgements ride with the next read's frames, so a file emptied
        # only by a commit of its own would keep holding off at any steady input.
        holding = not final and (self.holding(store) or (self._link_ok and not len(self._held)
                                                         and store.emptied_by(delete)))
        new = [SpooledFrame(self._next_id + i, *frame) for i, frame in enumerate(frames)]
        due = self._held.due(now, everything=not holding) + ([] if holding else new)
        if new:
            self._safe_seqs.accepted(new[-1].id, seqs)
        due_ids = {frame.id for frame in due}
        lowest_held = self._held.lowest_id(due_ids)
        self._safe_seqs.release(new[0].id if holding and new and lowest_held is None else lowest_held)
        # The periodic rows (stamp ceilings, seqs) go together: a commit made for one takes the other along when it
        # is near its time, so a healthy link makes one small commit a minute, not one for each.
        seqs_wait = self._safe_seqs.due_s(self._seqs_written_at, now)
        along = bool(due or delete or store.counters_pending or seqs_wait <= 0)
        rows = self._ceilings.final_rows(stamps) if final else self._ceilings.rows_for(stamps, self._wall_ms(), along)
        anyway = along or bool(rows)
        seqs_due = bool(self._safe_seqs.rows()) and (
            final or self._safe_seqs.due_s(self._seqs_written_at, now, riding=anyway) <= 0)
        if anyway or seqs_due:
            write(due, delete, rows, self._safe_seqs.rows() if seqs_due else None)
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

    def take(self, store: Store, after_id: int, limit: int) -> list[SpooledFrame]:
        """Held (first: one committed meanwhile shows in both) and committed frames together."""
        held = self._held.take(after_id, limit)
        if self._committed_max_id <= after_id:
            return self._taken(held)
        committed = store.take(after_id, limit)
        if not held:
            return self._taken(committed)
        merged = {frame.id: frame for frame in committed}
        merged.update((frame.id, frame) for frame in held)
        return self._taken([merged[frame_id] for frame_id in sorted(merged)[:limit]])

    def _taken(self, frames: list[SpooledFrame]) -> list[SpooledFrame]:
        if frames and frames[-1].id > self._taken_max_id:
            self._taken_max_id = frames[-1].id
        return frames

    def flush_delay_ms(self, store: Store, now: float) -> float | None:
        """A held frame, held frames while holding is not safe, seq rows waiting."""
        if len(self._held) and not self.holding(store):
            return 0.0
        delay_s = min(self._held.next_due_s(now), self._safe_seqs.due_s(self._seqs_written_at, now))
        return None if delay_s == float("inf") else max(0.0, delay_s * 1000)

    def checkpoint_due(self, changed: int, idle_s: float) -> bool:
        return changed >= CHECKPOINT_ROWS or (changed > 0 and idle_s >= CHECKPOINT_IDLE_S)


POLICIES: dict[str, type[Immediate] | type[Deferred]] = {"batch": Batch, "interval": Interval, "deferred": Deferred}

