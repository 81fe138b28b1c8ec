"""Which per-source seqs the spool may store in source_seqs (gateway/contract/spool.md, "Seqs across a restart").

A stored seq says "every frame of this source up to here is safe": after a crash the next run counts the seq gap
from it as frames possibly lost. So a row may only name a frame once it, and every frame accepted before it, is
committed or acknowledged: with the deferred policy a frame held in memory is not safe yet. Pure bookkeeping: the
spool tells which ids are still held and writes the rows this returns.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from ..contract_constants import contract_seconds

Seqs = dict[str, tuple[int, int]]  # source -> (seq, ts_ms) of its newest frame

# Deferred: rows ride with a commit made anyway (the stamp ceilings', about once a minute) once this old, and get a
# commit of their own (which takes the near ceilings along) only once ROWS_ALONE_S old. Each write adds a page of a
# table of its own to the WAL; a commit of its own would also write the WAL index and fsync: the SD card's wear.
ROWS_INTERVAL_S = contract_seconds("seq_rows_interval_ms")
ROWS_ALONE_S = contract_seconds("seq_rows_alone_ms")
# A source with no stored row (new, or never stored) has its row written as soon as it is writable, with the next
# commit or one of its own: otherwise the frames it loses in a crash in its first minute would count nowhere. One small
# write per new source; forgetting a source past this many costs it one more.
MAX_KNOWN = 4096


class SafeSeqs:
    def __init__(self, stored: Iterable[str] = ()) -> None:
        self._groups: deque[tuple[int, Seqs]] = deque()  # (the group's highest id, its newest seqs), by id
        self._writable: Seqs = {}
        self._known = set(stored)  # sources with a row in source_seqs

    def accepted(self, highest_id: int, seqs: Seqs) -> None:
        """A group of frames with ids up to highest_id was handed to the spool; seqs: its newest per source."""
        if seqs:
            self._groups.append((highest_id, seqs))

    def release(self, lowest_held_id: int | None) -> None:
        """Groups whose every id is below the lowest id still held (None: nothing held) are safe now."""
        while self._groups and (lowest_held_id is None or self._groups[0][0] < lowest_held_id):
            self._writable.update(self._groups.popleft()[1])

    def rows(self) -> Seqs:
        """The rows to write with the next commit (they stay here until written() says it is done)."""
        return self._writable

    def due_s(self, last_written_at: float, now: float, riding: bool = False) -> float:
        """Seconds until writable rows are to be written (0 or less: now), riding with a commit made anyway or by
        one of their own; inf when none wait."""
        if not self._writable:
            return float("inf")
        if not self._known.issuperset(self._writable):
            return 0.0  # a source without a stored row
        return last_written_at + (ROWS_INTERVAL_S if riding else ROWS_ALONE_S) - now

    def written(self) -> None:
        if len(self._known) > MAX_KNOWN:
            self._known.clear()
        self._known.update(self._writable)
        self._writable = {}
