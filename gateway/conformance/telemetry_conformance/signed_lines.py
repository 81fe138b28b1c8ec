"""T2 lines as a base station forwards a radio node's signed payload (PROTOCOL.md sections 3 and 8), the tag computed
with Python's own hmac: the harness imports no gateway code, and no firmware either."""

from __future__ import annotations

import binascii
import hashlib
import hmac
import struct

TAG_BYTES = 6


def signed_payload(key: bytes, node: int, seq: int, counter: int, metrics: list[tuple[int, int]],
                   vbat_mv: int = 0, send_failures: int = 0) -> bytes:
    """A version-2 payload: header, (metric id, int16 value) records, the first 6 bytes of HMAC-SHA256 over them."""
    signed = struct.pack("<BBHIHB", 2, node, seq, counter, vbat_mv, send_failures) + b"".join(
        struct.pack("<Bh", metric_id, value) for metric_id, value in metrics)
    return signed + hmac.new(key, signed, hashlib.sha256).digest()[:TAG_BYTES]


def t2_line(node: int, payload: bytes) -> bytes:
    body = f"T2,node{node},{payload.hex().upper()}".encode("ascii")
    return b"$%s*%04X\n" % (body, binascii.crc_hqx(body, 0xFFFF))
