"""Per-source sequence numbers: drop radio retransmissions, count lost frames and conflicting repeats.

A base station may print the same payload twice when the sensor node's ack was lost and it resent. Such a frame
has the same source, seq and content as one seen moments ago: a duplicate, dropped. The same source and seq with
other content (values, metrics or t) within the window is no retransmission (two boards with one name, or a board
that restarted without the rule below noticing): a conflict, kept like any valid frame and counted. A seq seen
longer ago than the window is a wrapped counter, not a duplicate.

Restart rule: a seq 0 that does not follow 65535 is a board restart. It clears what is remembered of the source,
so the rebooted board's 1, 2, 3... are not taken for repeats of the previous run's. A seq 0 with the content of
the seq 0 just before it (the source's last frame, within the window) is still a duplicate. A source's first
frame is never a restart.

Across a gateway restart: resume() seeds a source with the last seq an earlier run stored as safe; its first frame
is judged against it (gateway/contract/spool.md, "Seqs across a restart"): a gap is counted like any other (and
marked resumed, so a crash's possible loss can be counted apart); a frame at or behind it counts nothing.

Content is compared by a hash the caller computes, so a remembered seq costs a few words, not a frame. How many
sources are remembered is bounded by the caller, which forget()s the ones it evicts.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

from .contract_constants import contract_number
from .frame import SEQ_MODULUS

_LAST_SEQ = SEQ_MODULUS - 1
# Seqs remembered per source (a contract number: gateway/contract/vectors/sequence.jsonl). A retransmission comes
# moments later, a few frames on at most; a bound keeps a source's memory a few words whatever the window.
REMEMBERED_SEQS = contract_number("remembered_seqs")


class SeqVerdict(NamedTuple):  # one per frame: a tuple is the cheapest immutable record
    duplicate: bool  # a retransmission: drop it
    missing: int  # frames lost between the previous frame of this source and this one
    restarted: bool  # seq went back to 0: the board rebooted (not counted as loss)
    conflict: bool = False  # a repeated seq with other content: keep the frame, count it
    resumed: bool = False  # the source's first frame after a restart, judged against its stored seq


# Shared: most frames get one of these, so no tuple is built for them.
DUPLICATE = SeqVerdict(duplicate=True, missing=0, restarted=False)
NEXT = SeqVerdict(duplicate=False, missing=0, restarted=False)  # in order, or a source's first frame
RESTARTED = SeqVerdict(duplicate=False, missing=0, restarted=True)
_HALF = SEQ_MODULUS // 2  # a resumed source's seq this far or more past its stored one is at or behind it
CONFLICT = SeqVerdict(duplicate=False, missing=0, restarted=False, conflict=True)


class SeqTracker:
    def __init__(self, duplicate_window_ms: int, max_remembered: int = REMEMBERED_SEQS) -> None:
        self._window = duplicate_window_ms
        self._max = max_remembered
        # Per source: [its last seq, {seq: (ms seen, content hash)} oldest first]; a list so the last seq is set
        # in place, with one lookup per frame.
        self._sources: dict[str, list] = {}

    def __len__(self) -> int:
        return len(self._sources)

    def sources(self) -> list[str]:
        """The sources with a state: right after resume(), those an earlier run left seqs for."""
        return list(self._sources)

    def forget(self, source: str) -> None:
        self._sources.pop(source, None)

    def resume(self, source: str, seq: int) -> None:
        """An earlier run's last safe seq of source: its next frame is judged against it (no seqs remembered)."""
        self._sources[source] = [seq, None]

    def observe(self, source: str, seq: int, now_ms: int, content: int = 0) -> SeqVerdict:
        """content: a hash of what the frame says (t, metrics, values), to tell a retransmission from a conflict."""
        state = self._sources.get(source)
        if state is None:
            self._sources[source] = [seq, OrderedDict({seq: (now_ms, content)})]
            return NEXT
        last, seen = state
        if seen is None:
            return self._resumed(state, seq, now_ms, content)
        if seq == 0 and last != _LAST_SEQ:
            if last == 0:
                before = seen.get(0)
                if before is not None and before[1] == content and now_ms - before[0] <= self._window:
                    return DUPLICATE
            seen.clear()  # the previous run's seqs say nothing about the new run's
            seen[0] = (now_ms, content)
            state[0] = 0
            return RESTARTED
        before = seen.get(seq)
        if before is not None:
            if now_ms - before[0] <= self._window:
                if before[1] == content:
                    return DUPLICATE
                # Kept; the newer content is remembered, so its own retransmission is a duplicate. The sequence
                # does not move: the conflicting frame is no news of frames lost.
                seen[seq] = (now_ms, content)
                return CONFLICT
            del seen[seq]  # seen too long ago: a wrapped counter; remembered anew below
        elif len(seen) >= self._max:
            seen.popitem(last=False)  # the oldest; past the window or not, only the last few seqs count
        seen[seq] = (now_ms, content)
        state[0] = seq
        expected = last + 1 if last != _LAST_SEQ else 0
        if seq == expected:
            return NEXT
        return SeqVerdict(False, (seq - expected) % SEQ_MODULUS, False)

    @staticmethod
    def _resumed(state: list, seq: int, now_ms: int, content: int) -> SeqVerdict:
        last = state[0]
        state[0], state[1] = seq, OrderedDict({seq: (now_ms, content)})
        if seq == 0 and last != _LAST_SEQ:
            return RESTARTED
        missing = (seq - last - 1) % SEQ_MODULUS
        return SeqVerdict(False, missing if missing < _HALF else 0, False, resumed=True)
