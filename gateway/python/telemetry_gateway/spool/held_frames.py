"""Frames held in memory by the deferred spool policy (gateway/contract/spool.md, "`deferred` in detail"): each has
its id already; the ones Cassandra acknowledges in time are never written, the others are committed once due.

Pure bookkeeping, no I/O: the deferred policy (policies.py) decides when to commit. One thread holds and drops
frames, another takes them (the sender), so every method takes the lock.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import TYPE_CHECKING, Iterable

from ..contract_constants import contract_number

if TYPE_CHECKING:
    from .store import SpooledFrame

# Past this many the oldest are committed at once: memory stays bounded while Cassandra is slow.
MAX_HELD = contract_number("held_frames_max")


class HeldFrames:
    def __init__(self, hold_s: float, max_held: int = MAX_HELD) -> None:
        self._hold_s = hold_s
        self._max_held = max_held
        self._frames: dict[int, SpooledFrame] = {}  # in id order: ids are given in arrival order
        self._since: deque[tuple[int, float]] = deque()  # (id, when held), oldest first; acked ids linger here
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._frames)

    def hold(self, frames: Iterable[SpooledFrame], now: float) -> None:
        with self._lock:
            for frame in frames:
                self._frames[frame.id] = frame
                self._since.append((frame.id, now))

    def take(self, after_id: int, limit: int) -> list[SpooledFrame]:
        """The oldest held frames with an id above after_id: walks back from the newest, so a take costs what it
        returns, not what is held."""
        taken = []
        with self._lock:
            for frame_id in reversed(self._frames):
                if frame_id <= after_id:
                    break
                taken.append(self._frames[frame_id])
        taken.reverse()
        return taken[:limit]

    def acknowledge(self, first: int, last: int) -> bool:
        """Drops the held frames of an acknowledged inclusive id range; True if some of the range was not held
        (committed before, or left by an earlier run): those rows must be deleted from the spool file."""
        with self._lock:
            if last - first + 1 > len(self._frames):
                dropped = sum(self._frames.pop(i, None) is not None for i in list(self._frames) if first <= i <= last)
            else:
                dropped = sum(self._frames.pop(i, None) is not None for i in range(first, last + 1))
        return dropped < last - first + 1

    def due(self, now: float, everything: bool = False) -> list[SpooledFrame]:
        """The held frames to commit now: held for hold_s or more, the oldest beyond max_held, or all of them.
        They stay held until committed() says the commit is done."""
        with self._lock:
            while self._since and self._since[0][0] not in self._frames:
                self._since.popleft()  # acknowledged in time
            if everything:
                return list(self._frames.values())
            over = len(self._frames) - self._max_held
            due = []
            for frame_id, since in self._since:
                if frame_id not in self._frames:
                    continue
                if now - since < self._hold_s and over <= 0:
                    break
                due.append(self._frames[frame_id])
                over -= 1
            return due

    def is_due(self, now: float) -> bool:
        """Cheap check for an idle loop: whether due() would return something."""
        return self.next_due_s(now) <= 0

    def next_due_s(self, now: float) -> float:
        """Seconds until due() returns something (0 or less: now); inf when nothing is held."""
        with self._lock:
            while self._since and self._since[0][0] not in self._frames:
                self._since.popleft()
            if not self._since:
                return float("inf")
            if len(self._frames) > self._max_held:
                return 0.0
            return self._since[0][1] + self._hold_s - now

    def lowest_id(self, excluding: set[int] = frozenset()) -> int | None:
        """The lowest id held, not counting the excluded ones (frames being committed); None if there is none."""
        with self._lock:
            return next((frame_id for frame_id in self._frames if frame_id not in excluding), None)

    def committed(self, frames: Iterable[SpooledFrame]) -> None:
        """These frames are in the spool file now: no longer held."""
        with self._lock:
            for frame in frames:
                self._frames.pop(frame.id, None)
