"""T2 frames: a radio node's version-2 payload, forwarded by the base station as hex (PROTOCOL.md section 3, steps
S1-S5, and section 6). The decoder only reads the payload; whether its tag is right is the verifier's question
(signing.py), since that needs the keys and the last counters.
Pure functions: bytes in, a value out, never an exception for bad input.
"""

from __future__ import annotations

import re
import struct
from typing import NamedTuple

from .contract_constants import contract_number

PAYLOAD_VERSION = contract_number("signed_payload_version")
HEADER_BYTES = contract_number("signed_header_bytes")  # version, node id, seq, counter, vbat, send failures
TAG_BYTES = contract_number("signed_tag_bytes")
METRIC_BYTES = contract_number("signed_metric_bytes")
MAX_METRICS = contract_number("signed_metrics_max")
_HEADER = struct.Struct("<BBHIHB")
_METRIC = struct.Struct("<Bh")
_HEX = re.compile(rb"(?:[0-9A-F]{2})+")
# Metric id → (frame key, decimals): PROTOCOL.md section 6.3. An id not listed is left out (section 6.4).
METRIC_IDS = {1: ("temp_in", 2), 2: ("temp_out", 2), 3: ("temp_check", 2), 4: ("humidity", 1), 5: ("light", 0),
              6: ("temp", 2)}
_SCALE = (1, 10, 100)


class Signature(NamedTuple):
    counter: int
    signed: bytes  # the payload without its tag: what the MAC covers
    tag: bytes


class Payload(NamedTuple):
    source: str
    seq: int
    values: tuple[tuple[str, float], ...]
    signature: Signature


def decode_payload(source: bytes, payload_hex: bytes) -> Payload | str:
    """Steps S2-S5 on a T2 line's source and payload fields: the payload, or a reject reason."""
    if not _HEX.fullmatch(payload_hex):
        return "bad_syntax"
    payload = bytes.fromhex(payload_hex.decode("ascii"))
    count, extra = divmod(len(payload) - HEADER_BYTES - TAG_BYTES, METRIC_BYTES)
    if extra or not 0 <= count <= MAX_METRICS:
        return "bad_payload"
    version, node, seq, counter, vbat_mv, _failures = _HEADER.unpack_from(payload)
    if version != PAYLOAD_VERSION or node in (0, 255):
        return "bad_payload"
    if source != b"node%d" % node:
        return "bad_source"
    seen: set[int] = set()
    values = []
    for offset in range(HEADER_BYTES, HEADER_BYTES + METRIC_BYTES * count, METRIC_BYTES):
        metric_id, raw = _METRIC.unpack_from(payload, offset)
        if metric_id == 0:
            return "bad_payload"
        if metric_id in seen:
            return "duplicate_key"
        seen.add(metric_id)
        known = METRIC_IDS.get(metric_id)
        if known is not None:
            key, decimals = known
            # A division, not a product with 0.01: it rounds once, to the double the T1 text would give.
            values.append((key, raw / _SCALE[decimals]))
    if vbat_mv:
        values.append(("vbat", vbat_mv / 1000))
    if not values:
        return "no_values"
    end = len(payload) - TAG_BYTES
    return Payload(source.decode("ascii"), seq, tuple(values), Signature(counter, payload[:end], payload[end:]))
