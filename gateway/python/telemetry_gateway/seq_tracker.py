"""Per-source sequence numbers: drop radio retransmissions, count lost frames.

A base station may print the same payload twice when the sensor node's ack was lost and it resent. Such a frame
has the same source and seq as one seen moments ago; a seq seen long ago is a wrapped counter, not a duplicate.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

from .frame import SEQ_MODULUS


class SeqVerdict(NamedTuple):  # one per frame: a tuple is the cheapest immutable record
    duplicate: bool
    missing: int  # frames lost between the previous frame of this source and this one
    restarted: bool  # seq went back to 0: the board rebooted (not counted as loss)


_DUPLICATE = SeqVerdict(duplicate=True, missing=0, restarted=False)
_NEXT = SeqVerdict(duplicate=False, missing=0, restarted=False)  # in order, or a source's first frame
_RESTARTED = SeqVerdict(duplicate=False, missing=0, restarted=True)


class SeqTracker:
    def __init__(self, duplicate_window_ms: int, max_remembered: int = 64) -> None:
        self._window = duplicate_window_ms
        self._max = max_remembered
        self._seen: dict[str, OrderedDict[int, int]] = {}
        self._last: dict[str, int] = {}

    def observe(self, source: str, seq: int, now_ms: int) -> SeqVerdict:
        seen = self._seen.setdefault(source, OrderedDict())
        while seen and (len(seen) >= self._max or now_ms - next(iter(seen.values())) > self._window):
            seen.popitem(last=False)
        if seq in seen:
            return _DUPLICATE
        seen[seq] = now_ms

        last = self._last.get(source)
        self._last[source] = seq
        if last is None:
            return _NEXT
        expected = (last + 1) % SEQ_MODULUS
        if seq == expected:
            return _NEXT
        if seq == 0:
            return _RESTARTED
        return SeqVerdict(False, (seq - expected) % SEQ_MODULUS, False)
