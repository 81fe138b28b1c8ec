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
        seen = self._seen.get(source)
        if seen is None:
            seen = self._seen[source] = OrderedDict()
        seen_ms = seen.get(seq)
        if seen_ms is not None:
            if now_ms - seen_ms <= self._window:
                return _DUPLICATE
            del seen[seq]  # seen too long ago: a wrapped counter; remembered anew below
        elif len(seen) >= self._max:
            seen.popitem(last=False)  # the oldest; past the window or not, only the last few seqs count
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
