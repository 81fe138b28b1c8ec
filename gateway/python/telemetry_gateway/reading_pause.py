"""Whether the inputs may read on: reading pauses while the spool has no room (its cap with when_full = pause, or a
full disk), with a metric and a log line, and resumes once the spool says there is room again. The credits of
committed reads are withheld meanwhile, so the readers stop reading and the bytes wait in the kernel, not in
memory. With when_full = drop_oldest a spool at its cap drops its oldest frames instead.
"""

from __future__ import annotations

import logging
import threading

from .contract_constants import contract_number
from .logs import RateLimitedLog, event
from .metrics import Metrics
from .spool import Spool

DROP_MIN_FRAMES = contract_number("drop_oldest_min_frames")  # when_full = drop_oldest: 1 %, at least this
ROOM_CHECK_S = 0.25  # while reading is paused, how often the spool is asked whether there is room again


class ReadingPause:
    def __init__(self, spool: Spool, metrics: Metrics, drop_oldest: bool) -> None:
        self._spool = spool
        self._metrics = metrics
        self._drop_oldest = drop_oldest
        self._log = RateLimitedLog()
        self._paused: str | None = None  # "cap" or "disk" while reading is paused
        self._withheld: list[threading.Semaphore] = []  # credits of committed reads, back once there is room
        self._next_check = 0.0

    def withhold(self, credits: list[threading.Semaphore]) -> None:
        """Credits of committed reads: they go back at the next room check that finds room (due now)."""
        self._withheld += credits
        self._next_check = 0.0

    def next_check_s(self, now: float) -> float:
        """Seconds until the next room check is due; inf while no credit is withheld."""
        return self._next_check - now if self._withheld else float("inf")

    def release_if_room(self, now: float) -> None:
        """The withheld credits go back if the room check, due every ROOM_CHECK_S, finds room."""
        if self._withheld and now >= self._next_check:
            self._next_check = now + ROOM_CHECK_S
            if self.has_room():
                for credit in self._withheld:
                    credit.release()
                self._withheld = []

    def has_room(self) -> bool:
        """Whether reading may go on; pauses it (with a metric and a log line) when the spool has no room."""
        room = self._spool.room()
        if room is None:
            if self._paused is not None:
                event(logging.INFO, "spool_room_again", kind=self._paused, spooled_frames=self._spool.depth,
                      action="reading resumed")
                self._paused = None
                self._metrics.reading_paused.set(0)
            return True
        if room == "cap" and self._drop_oldest and self._spool.depth:
            dropped = self._spool.drop_oldest(max(self._spool.depth // 100, DROP_MIN_FRAMES))
            self._metrics.spool_dropped.inc(dropped)
            self._metrics.spool_full.labels(room).inc()
            self._log.event(logging.WARNING, "spool_full_dropped_oldest", kind=room, dropped=dropped)
            return self._spool.room() is None
        self.pause(room)
        return False

    def pause(self, kind: str, **detail: object) -> None:
        """Reading pauses: kind "cap" or "disk"; detail: more fields for the log line."""
        if self._paused == kind:
            return
        self._paused = kind
        self._metrics.spool_full.labels(kind).inc()
        self._metrics.reading_paused.set(1)
        self._log.event(logging.ERROR, "spool_full", key=kind, kind=kind, spooled_frames=self._spool.depth,
                        **detail, action="reading paused until Cassandra drains the spool" if kind == "cap"
                        else "reading paused; free disk space (the spool still drains)")
