"""Sending requests: asynchronously, at most max_in_flight at a time, answers handed back to the sender's thread."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable

from cassandra.cluster import Session
from cassandra.query import Statement


@dataclass(order=True)
class Request:
    due: float  # when a failed request may be sent again (RetrySchedule)
    statement: Statement = field(compare=False)
    owner: object = field(compare=False)  # what its success counts towards (WriteLedger); None for nobody
    attempts: int = field(default=0, compare=False)
    sent_at: float = field(default=0.0, compare=False)
    day: tuple | None = field(default=None, compare=False)  # (source, day) of a readings write: needs its mark


class RequestPump:
    """Ready requests wait in order; send() keeps up to max_in_flight of them at the driver. The driver's
    callbacks run on its event-loop thread and only hand the answer over (answers()), so all bookkeeping stays on
    the sender's thread."""

    def __init__(self, max_in_flight: int, wake: threading.Event,
                 before_send: Callable[[Request], bool] | None = None) -> None:
        self.max_in_flight = max_in_flight
        self.in_flight = 0  # sent, not yet answered
        self._ready: deque[Request] = deque()
        self._answers: deque[tuple[Request, BaseException | None]] = deque()
        self._wake = wake
        # Called with each request right before it is sent (each attempt): False keeps it back (its caller has
        # taken it over, e.g. until the mark of its day is written); it may also set the request's statement.
        self._before_send = before_send

    @property
    def waiting(self) -> int:
        """Requests ready but not yet sent."""
        return len(self._ready)

    def add(self, requests: Iterable[Request], first: bool = False) -> None:
        """Queues requests; first=True puts them ahead of those already waiting (retries, acknowledgements)."""
        if first:
            self._ready.extendleft(reversed(list(requests)))
        else:
            self._ready.extend(requests)

    def send(self, session: Session) -> None:
        before_send = self._before_send
        while self._ready and self.in_flight < self.max_in_flight:
            request = self._ready.popleft()
            if before_send is not None and not before_send(request):
                continue
            self.in_flight += 1
            request.sent_at = time.monotonic()
            try:
                future = session.execute_async(request.statement)
            except Exception as error:  # e.g. the session is shutting down: same path as a failed request
                self._answers.append((request, error))
                continue
            future.add_callbacks(self._on_success, self._on_failure, callback_args=(request,),
                                 errback_args=(request,))

    def answers(self) -> list[tuple[Request, BaseException | None]]:
        """The answers received since the last call: (request, None) for a success, (request, error) otherwise."""
        answers = []
        while self._answers:
            answers.append(self._answers.popleft())
        self.in_flight -= len(answers)
        return answers

    def _on_success(self, _rows, request: Request) -> None:
        self._answers.append((request, None))
        self._wake.set()

    def _on_failure(self, error: BaseException, request: Request) -> None:
        self._answers.append((request, error))
        self._wake.set()
