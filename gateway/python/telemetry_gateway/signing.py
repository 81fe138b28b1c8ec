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


# HMAC's message for a key's fingerprint: text, so never a node's signed bytes (they start with version byte 2).
FINGERPRINT_MESSAGE = b"telemetry counter fingerprint"


class SigningPolicy(NamedTuple):
    keys: Mapping[str, bytes]  # source → 16-byte key
    unsigned_allowed: frozenset[str] = frozenset()  # sources whose unsigned frames are accepted on any input
    must_sign: str = "keyed"  # "keyed": the sources with a key must sign; "all": every source must

    def signs_only(self, source: str, trusted: bool = False) -> bool:
        """Whether the source's unsigned frames are refused on an input (trusted or not: signing.md)."""
        if source in self.unsigned_allowed:
            return False
        return self.must_sign == "all" or source in self.keys or (bool(self.keys) and not trusted)


def tag_of(key: bytes, signed: bytes) -> bytes:
    return hmac.new(key, signed, hashlib.sha256).digest()[:TAG_BYTES]


def key_fingerprint(key: bytes) -> str:
    """What source_counters stores to tell which key a counter belongs to: a keyed function of the key (signing.md,
    "A counter belongs to a key"), so the spool says nothing about the key itself."""
    return hmac.new(key, FINGERPRINT_MESSAGE, hashlib.sha256).digest()[:8].hex()


class Verifier:
    def __init__(self, policy: SigningPolicy, counters: Mapping[str, int],
                 fingerprints: Mapping[str, str] | None = None) -> None:
        """counters, fingerprints: the spool's rows (a missing or '' fingerprint: a row written before them)."""
        self.policy = policy
        self.fingerprints = {source: key_fingerprint(key) for source, key in policy.keys.items()}
        self.counters: dict[str, int] = {}  # source → last accepted counter under its current key
        self._changed: dict[str, int] = {}
        self.rekeyed: list[tuple[str, int]] = []  # (source, old counter): started afresh under a new key
        stored = fingerprints or {}
        for source, counter in counters.items():
            old = stored.get(source, "")
            current = self.fingerprints.get(source)
            if current is not None and old and old != current:
                self.rekeyed.append((source, counter))
                continue
            self.counters[source] = counter
            if current is not None and not old:  # a row from before fingerprints: bound to the key it runs with
                self._changed[source] = counter
        self.rekeyed.sort()

    def verdict(self, frame: Frame, trusted: bool = False) -> str | None:
        """None: accept the frame; else the reject reason. trusted: it came from a trusted input. An accepted signed
        frame's counter becomes its source's last one."""
        signature = frame.signature
        if signature is None:
            return "unsigned" if self.policy.signs_only(frame.source, trusted) else None
        key = self.policy.keys.get(frame.source)
        # The tag first: only a frame with a good tag says anything about the counter.
        if key is None or not hmac.compare_digest(tag_of(key, signature.signed), signature.tag):
            return "bad_mac"
        if signature.counter <= self.counters.get(frame.source, -1):
            return "replay"
        self.counters[frame.source] = self._changed[frame.source] = signature.counter
        return None

    def take_changed(self) -> dict[str, tuple[int, str]]:
        """The counters accepted since the last call, each with its key's fingerprint: the spool stores them with
        the frames they came with."""
        changed, self._changed = self._changed, {}
        return {source: (counter, self.fingerprints[source]) for source, counter in changed.items()}
