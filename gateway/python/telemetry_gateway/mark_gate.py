"""Day marks first (gateway/contract/day-marks.md): a readings request for (source, day) goes out, each attempt,
only while that day has a fresh mark (DayMarks). A chunk's days without one get a `day_changes` write first (one
UNLOGGED batch, stamped when each attempt is sent), and their readings requests wait for it (MarkWrite).

No clock of its own: the sender gives the times, so one clock drives the whole sender.
"""

from __future__ import annotations

from datetime import date
from typing import Callable

from cassandra.query import Statement

from .day_marks import DayMarks
from .request_pump import Request, RequestPump
from .write_ledger import MarkWrite, WriteLedger


class MarkGate:
    def __init__(self, pump: RequestPump, ledger: WriteLedger,
                 mark_batch: Callable[[list[tuple[str, date]], int], Statement]) -> None:
        self._pump = pump
        self._ledger = ledger
        self._mark_batch = mark_batch  # the day_changes rows of days, stamped wall_ms
        self._marks = DayMarks()
        self.parked = 0  # readings requests waiting for a mark of their day

    def hold(self, requests: list[Request], days: list[tuple[str, date]], now: float) -> list[Request]:
        """The requests that may be sent now. The readings requests of days without a fresh mark wait for one
        (a mark write for those with none in flight is started here, ahead of everything else)."""
        unmarked, to_mark = self._marks.needs(days, now)
        if not unmarked:
            return requests
        if to_mark:
            mark = MarkWrite(to_mark)
            self._marks.begin(to_mark, mark)
            self._ledger.expect(1)
            self._pump.add([Request(0.0, None, mark)], first=True)  # its statement is made per attempt
        ready = []
        for request in requests:
            if request.day in unmarked:
                self._marks.pending(request.day).waiting.append(request)
                self.parked += 1
            else:
                ready.append(request)
        return ready

    def before_send(self, request: Request, now: float, wall_ms: int) -> bool:
        """The pump's last word before each attempt: a mark is stamped now; a readings request goes only while its
        day's mark is fresh (it may have gone stale while the request waited for a retry), else it waits for a
        new one."""
        owner = request.owner
        if type(owner) is MarkWrite:
            owner.sent_at = now
            request.statement = self._mark_batch(owner.days, wall_ms)
            return True
        if request.day is None or self._marks.is_fresh(request.day, now):
            return True
        return bool(self.hold([request], [request.day], now))

    def marked(self, mark: MarkWrite, now: float) -> None:
        """Cassandra acknowledged mark: its days are fresh, and the readings waiting for it go first."""
        self._marks.acknowledged(mark, mark.days, mark.sent_at, now)
        self.parked -= len(mark.waiting)
        self._pump.add(mark.waiting, first=True)
        mark.waiting = []
