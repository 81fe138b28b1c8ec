"""Failed requests wait for their next attempt on the one backoff schedule (backoff.py; the contract's
cassandra-writes.md, "Retry schedule")."""

from __future__ import annotations

import heapq

from .backoff import backoff_s
from .request_pump import Request


class RetrySchedule:
    """A request is retried until it succeeds: nothing is dropped, and every write is idempotent."""

    def __init__(self, max_s: float) -> None:
        self._max_s = max_s
        self._waiting: list[Request] = []  # a heap by due time

    def __len__(self) -> int:
        return len(self._waiting)

    def retry_later(self, request: Request, now: float) -> None:
        request.attempts += 1
        request.due = now + backoff_s(request.attempts, self._max_s)
        heapq.heappush(self._waiting, request)

    def next_due_s(self, now: float) -> float:
        """Seconds until the earliest retry is due; inf when none waits."""
        return self._waiting[0].due - now if self._waiting else float("inf")

    def due(self, now: float) -> list[Request]:
        """The requests whose wait is over, earliest first."""
        due = []
        while self._waiting and self._waiting[0].due <= now:
            due.append(heapq.heappop(self._waiting))
        return due
