"""Per-source tally for the status page (gateway/contract/status.md): the last frame and its values, frames per
minute over the last 5 minutes, and since start seq gaps, duplicates and the whole frames refused (signing verdicts).
A pure function of the events fed to it and the clock readings passed in; threads that share one hold its lock."""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from .contract_constants import contract_number, contract_seconds
from .status_series import SeriesTally

# Frames per minute are counted over the last WINDOW_S whole seconds, the current one included.
WINDOW_S = round(contract_seconds("status_window_ms"))
# Refused frames of one source in the window that make a burst (status.md: someone on the air, or a board set up
# wrong).
BURST = contract_number("refused_burst_frames")


@dataclass
class SourceState:
    last_received_ms: int | None = None
    values_ts_ms: int | None = None
    values: object = ()  # the last frame's readings, in whatever form the caller keeps them
    seq_gaps: int = 0
    duplicates: int = 0
    rejects: Counter = field(default_factory=Counter)  # reason → whole frames of this source refused (signing)
    # (second, frames received in it), oldest first, only seconds within the window of the newest one
    seconds: deque = field(default_factory=deque)
    refused_seconds: deque = field(default_factory=deque)  # the same, of frames refused by a signing verdict


@dataclass(frozen=True)
class SourceView:
    source: str
    last_received_ms: int | None
    values_ts_ms: int | None
    values: object
    frames_per_minute: float
    seq_gaps: int
    duplicates: int
    rejects: Mapping[str, int]
    refused_burst: bool = False  # BURST or more frames refused in the window


def _count_in(seconds: deque, received_ms: int) -> None:
    """One more event at received_ms, in a deque of [second, count] kept to the window of the newest second."""
    second = received_ms // 1000
    if seconds and seconds[-1][0] == second:
        seconds[-1][1] += 1
    else:
        seconds.append([second, 1])
        while seconds[0][0] <= second - WINDOW_S:
            seconds.popleft()


def _in_window(seconds: deque, now_ms: int) -> int:
    first, now = now_ms // 1000 - WINDOW_S, now_ms // 1000  # seconds after first, up to now, are in the window
    return sum(count for second, count in seconds if first < second <= now)


class SourceTally:
    def __init__(self) -> None:
        self._sources: dict[str, SourceState] = {}
        self.series = SeriesTally()  # the sparklines, fed by the caller with each accepted frame's numbers
        self.lock = threading.Lock()

    def _state(self, source: str) -> SourceState:
        state = self._sources.get(source)
        if state is None:
            state = self._sources[source] = SourceState()
        return state

    def frame(self, source: str, received_ms: int, ts_ms: int, values: object) -> None:
        """An accepted frame (stored, not a duplicate), read at received_ms, its readings at ts_ms."""
        state = self._state(source)
        if state.last_received_ms is None or received_ms >= state.last_received_ms:
            state.last_received_ms = received_ms
            state.values_ts_ms, state.values = ts_ms, values
        _count_in(state.seconds, received_ms)

    def duplicate(self, source: str) -> None:
        self._state(source).duplicates += 1

    def gap(self, source: str, missing: int) -> None:
        self._state(source).seq_gaps += missing

    def reject(self, source: str, reason: str, keyed: bool, received_ms: int) -> None:
        """A whole frame of this source refused (a signing verdict), read at received_ms. Counted only for a source
        already listed or one with a key: forged names cannot grow the table."""
        state = self._sources.get(source)
        if state is None:
            if not keyed:
                return
            state = self._state(source)
        state.rejects[reason] += 1
        _count_in(state.refused_seconds, received_ms)

    def forget(self, source: str) -> None:
        """A source the gateway no longer tracks ([decode] max_sources)."""
        self._sources.pop(source, None)
        self.series.forget(source)

    def last_seen_ms(self) -> dict[str, int]:
        """Per source, when its last frame was read."""
        return {source: state.last_received_ms for source, state in self._sources.items()
                if state.last_received_ms is not None}

    def view(self, now_ms: int) -> list[SourceView]:
        """Every source, sorted by name, as of now_ms."""
        return [SourceView(source, state.last_received_ms, state.values_ts_ms, state.values,
                           _in_window(state.seconds, now_ms) / (WINDOW_S / 60), state.seq_gaps, state.duplicates,
                           dict(sorted(state.rejects.items())), _in_window(state.refused_seconds, now_ms) >= BURST)
                for source, state in sorted(self._sources.items())]


def is_stale(last_received_ms: int | None, now_ms: int, stale_after_ms: int) -> bool:
    """No frame for longer than stale_after_ms (or none since start)."""
    return last_received_ms is None or now_ms - last_received_ms > stale_after_ms
