"""One timestamp per accepted frame: UTC, milliseconds.

An explicit `t` from the board is used as given when it is plausible, so replaying the same backfill writes the
same keys. Otherwise the time of receipt is used, made strictly increasing per source: two frames of a source
arriving within one millisecond would otherwise share a primary key and overwrite each other.
"""

from __future__ import annotations

import time
from datetime import date
from typing import NamedTuple

DAY_MS = 86_400_000
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


class Stamp(NamedTuple):  # one per frame: a tuple is the cheapest immutable record
    ts_ms: int
    explicit_t_refused: bool  # the frame carried a t outside the plausible window


class Stamper:
    """Receipt stamps are strictly increasing per source, also for a source forgotten (evicted to bound memory) and
    seen again: an unknown source's stamps start above every forgotten stamp (the floor). Forgotten sources are the
    least recently seen, so the floor is normally in the past and changes nothing; it matters only when stamps ran
    ahead of the clock (many frames in one ms, or the clock stepped back)."""

    def __init__(self, max_future_ms: int, max_age_ms: int, last_receipt: dict[str, int] | None = None,
                 max_sources: int | None = None) -> None:
        self._max_future = max_future_ms
        self._max_age = max_age_ms
        self._floor = -1  # the newest stamp of any forgotten source
        # Carried over from before a restart (the spool keeps it): stamps keep increasing across restarts. Only the
        # newest max_sources are kept (the caller's bound); the rest, and any the caller did not load, are at most
        # the oldest stamp kept, which becomes the floor.
        newest = sorted((last_receipt or {}).items(), key=lambda item: item[1])
        if max_sources is not None and newest and len(newest) >= max_sources:
            newest = newest[-max_sources:]
            self._floor = newest[0][1]
        self._last_receipt: dict[str, int] = dict(newest)  # oldest stamp first
        self.changed: dict[str, int] = {}  # receipt stamps given since the caller last took them

    def sources(self) -> list[str]:
        """The sources with a remembered stamp, the oldest stamp first."""
        return list(self._last_receipt)

    def forget(self, source: str) -> None:
        last = self._last_receipt.pop(source, None)
        if last is not None and last > self._floor:
            self._floor = last

    def stamp(self, source: str, t: int | None, received_ms: int) -> Stamp:
        if t is not None and received_ms - self._max_age <= t <= received_ms + self._max_future:
            return Stamp(t, False)
        ts = max(received_ms, self._last_receipt.get(source, self._floor) + 1)
        self._last_receipt[source] = self.changed[source] = ts
        return Stamp(ts, t is not None)

    def take_changed(self) -> dict[str, int]:
        changed, self.changed = self.changed, {}
        return changed


def utc_day(ts_ms: int) -> date:
    """The UTC date of a Unix-millisecond timestamp (the `day` of a readings partition)."""
    return date.fromordinal(_EPOCH_ORDINAL + ts_ms // DAY_MS)


def iso_ms(ms: int) -> str:
    """Unix ms as UTC ISO 8601 with ms (logs, status, alerts): 2026-11-26T09:30:00.123Z."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"
