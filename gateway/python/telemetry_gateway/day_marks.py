"""Day marks (gateway/contract/day-marks.md): which (source, UTC day) pairs may have readings written now.

A readings write for (source, day) is sent only while that day has a fresh mark: a `day_changes` row whose write
Cassandra acknowledged, from an attempt sent at most MARK_FRESH_S before (on the gateway's monotonic clock). A day
without one gets a mark first, and its readings wait for it. No I/O here: the sender (sender.py) sends the marks
and the readings, and tells this when a mark is acknowledged.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import date
from typing import Iterable

from .contract_constants import contract_number, contract_seconds


# Half the analytics' default --clock-skew (600 s): every readings write completes within MARK_FRESH_S plus one
# request timeout of its mark's written_at, well inside the margin the daily job allows.
MARK_FRESH_S = contract_seconds("mark_fresh_ms")
# (source, day) pairs remembered; past it the oldest are forgotten (they only get a mark again).
MARKS_MAX = contract_number("day_marks_max")
HOUR_MS = 3_600_000

Day = tuple[str, date]


def mark_instant(wall_ms: int) -> tuple[int, int]:
    """(bucket, written_at) in ms since the epoch for a mark attempt sent at wall_ms (the writer's wall clock):
    the UTC hour of that instant, and the instant itself."""
    return wall_ms - wall_ms % HOUR_MS, wall_ms


class DayMarks:
    """Per (source, day): when the attempt of its last acknowledged mark was sent (monotonic seconds), and which
    mark write is in flight for it. Memory is bounded: entries older than fresh_s are dropped, and at most
    max_entries are kept (pruned whenever marks are recorded)."""

    def __init__(self, fresh_s: float = MARK_FRESH_S, max_entries: int = MARKS_MAX) -> None:
        self.fresh_s = fresh_s
        self._max = max_entries
        self._marked: OrderedDict[Day, float] = OrderedDict()  # in the order recorded: oldest first
        self._pending: dict[Day, object] = {}  # day -> the mark write in flight for it

    def __len__(self) -> int:
        return len(self._marked)

    def is_fresh(self, day: Day, now: float) -> bool:
        sent = self._marked.get(day)
        return sent is not None and now - sent <= self.fresh_s

    def needs(self, days: Iterable[Day], now: float) -> tuple[set[Day], list[Day]]:
        """(unmarked, to_mark): the days without a fresh mark, whose readings must wait, and those of them with no
        mark in flight, which need one now (in the order given)."""
        unmarked: set[Day] = set()
        to_mark: list[Day] = []
        for day in days:
            if day in unmarked or self.is_fresh(day, now):
                continue
            unmarked.add(day)
            if day not in self._pending:
                to_mark.append(day)
        return unmarked, to_mark

    def begin(self, days: Iterable[Day], mark: object) -> None:
        """A mark write for days is started (its first attempt is about to be sent)."""
        for day in days:
            self._pending[day] = mark

    def pending(self, day: Day) -> object | None:
        """The mark write in flight for day, if any."""
        return self._pending.get(day)

    def acknowledged(self, mark: object, days: Iterable[Day], sent_at: float, now: float) -> None:
        """Cassandra acknowledged mark (for days), whose acknowledged attempt was sent at sent_at."""
        marked = self._marked
        for day in days:
            if self._pending.get(day) is mark:
                del self._pending[day]
            previous = marked.pop(day, None)
            marked[day] = sent_at if previous is None else max(previous, sent_at)
        # Prune: the oldest first, up to the first fresh one once within the bound (a stale one recorded after a
        # fresh one goes later; is_fresh never trusts it meanwhile).
        while marked:
            _, sent = next(iter(marked.items()))
            if now - sent <= self.fresh_s and len(marked) <= self._max:
                break
            marked.popitem(last=False)
