"""Verification of signed frames (gateway/contract/signing.md): the tag, the counter, and whether a source may
still send unsigned frames. The functional core: keys, settings and last counters in, a verdict per frame out;
the spool persists the counters (commit(..., counters=)), the ingest counts and logs the rejects.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Mapping, NamedTuple

from .frame import Frame
from .signed_frame import TAG_BYTES

SIGNING_REJECT_REASONS = ("bad_mac", "replay", "unsigned")


class SigningPolicy(NamedTuple):
    keys: Mapping[str, bytes]  # source → 16-byte key
    unsigned_allowed: frozenset[str] = frozenset()  # sources with a key whose unsigned frames are still accepted
    must_sign: str = "keyed"  # "keyed": the sources with a key must sign; "all": every source must

    def signs_only(self, source: str) -> bool:
        """Whether the source's unsigned frames are refused."""
        if source in self.unsigned_allowed:
            return False
        return self.must_sign == "all" or source in self.keys


def tag_of(key: bytes, signed: bytes) -> bytes:
    return hmac.new(key, signed, hashlib.sha256).digest()[:TAG_BYTES]


class Verifier:
    def __init__(self, policy: SigningPolicy, counters: Mapping[str, int]) -> None:
        self.policy = policy
        self.counters = dict(counters)  # source → last accepted counter
        self._changed: dict[str, int] = {}

    def verdict(self, frame: Frame) -> str | None:
        """None: accept the frame; else the reject reason. An accepted signed frame's counter becomes its source's
        last one."""
        signature = frame.signature
        if signature is None:
            return "unsigned" if self.policy.signs_only(frame.source) else None
        key = self.policy.keys.get(frame.source)
        # The tag first: only a frame with a good tag says anything about the counter.
        if key is None or not hmac.compare_digest(tag_of(key, signature.signed), signature.tag):
            return "bad_mac"
        if signature.counter <= self.counters.get(frame.source, -1):
            return "replay"
        self.counters[frame.source] = self._changed[frame.source] = signature.counter
        return None

    def take_changed(self) -> dict[str, int]:
        """The counters accepted since the last call: the spool stores them with the frames they came with."""
        changed, self._changed = self._changed, {}
        return changed
