"""A spool frame row's checksum, written from gateway/contract/spool.md ("Row checksums") alone, for the kit's plain
sqlite3 writers and readers: CRC-32 (zlib's) of source, 0, ts_ms and received_ms (8 bytes big-endian each),
metrics, 0, vals, as a signed 32-bit integer."""

from __future__ import annotations

import struct
import zlib


def frame_crc(source: str, ts_ms: int, received_ms: int, metrics: str, vals: bytes) -> int:
    crc = zlib.crc32(source.encode() + b"\0" + struct.pack(">qq", ts_ms, received_ms) + metrics.encode() + b"\0"
                     + vals)
    return crc - (1 << 32) if crc >= 1 << 31 else crc
