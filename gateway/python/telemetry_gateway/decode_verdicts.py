"""decode's verdicts and its summary (gateway/contract/process.md, "decode"): each frame judged as the gateway
judges one from an input that is not trusted (signing.md), with the counters of this run only, kept in memory.
Without keys nothing is judged: frames are counted unverified."""

from __future__ import annotations

from typing import Mapping

from .frame import Decoded, Frame, Status
from .signing import SigningPolicy, Verifier

VERDICTS = ("accepted", "bad_mac", "replay", "unsigned")
ENDS = ("gone", "signal", "count", "seconds")  # why reading a port ended
_COUNTS = ("lines", "frames", *VERDICTS, "unverified", "status", "rejected")


class DecodeJudge:
    def __init__(self, policy: SigningPolicy | None, counters: Mapping[str, int] | None = None) -> None:
        """policy None: no keys file, so no verdicts. counters: last accepted counters to start from (none for a
        run of decode; tests give some)."""
        self._verifier = None if policy is None else Verifier(policy, counters or {})
        self.counts = dict.fromkeys(_COUNTS, 0)

    def judge(self, decoded: Decoded) -> str | None:
        """One output line's result: its verdict when it is a frame and keys are given, else None; counted."""
        counts = self.counts
        counts["lines"] += 1
        if not isinstance(decoded, Frame):
            counts["status" if isinstance(decoded, Status) else "rejected"] += 1
            return None
        counts["frames"] += 1
        if self._verifier is None:
            counts["unverified"] += 1
            return None
        verdict = self._verifier.verdict(decoded) or "accepted"
        counts[verdict] += 1
        return verdict

    def summary(self, path: str, end: str) -> str:
        """The summary line's text after `GATEWAY decode: `."""
        assert end in ENDS
        fields = " ".join(f"{name}={count}" for name, count in self.counts.items())
        return f"port={path} {fields} end={end}"
