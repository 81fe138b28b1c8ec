"""The checksum of a frame row (gateway/contract/spool.md, "Row checksums"): CRC-32 (zlib's) of the row's columns
but its id, stored as a signed 32-bit integer so that SQLite keeps it in 4 bytes."""

from __future__ import annotations

import struct
import zlib

_TIMES = struct.Struct(">qq")


def crc_bytes(source: str | bytes, ts_ms: int, received_ms: int, metrics: str | bytes, vals: bytes) -> bytes:
    """The bytes checksummed: source, 0, ts_ms and received_ms (8 bytes big-endian each), metrics, 0, vals."""
    source = source.encode("utf-8") if isinstance(source, str) else source
    metrics = metrics.encode("ascii") if isinstance(metrics, str) else metrics
    return b"".join((source, b"\0", _TIMES.pack(ts_ms, received_ms), metrics, b"\0", vals))


def frame_crc(source: str | bytes, ts_ms: int, received_ms: int, metrics: str | bytes, vals: bytes) -> int:
    crc = zlib.crc32(crc_bytes(source, ts_ms, received_ms, metrics, vals))
    return crc - (1 << 32) if crc >= 1 << 31 else crc


def crc_matches(crc: object, source: str | bytes, ts_ms: int, received_ms: int, metrics: str | bytes,
                vals: bytes) -> bool:
    """Whether a row's stored crc vouches for its columns: NULL (written before checksums) passes unchecked."""
    if crc is None:
        return True
    if type(crc) is not int or not isinstance(vals, bytes):
        return False
    try:
        return crc == frame_crc(source, ts_ms, received_ms, metrics, vals)
    except (UnicodeError, struct.error, TypeError):  # a damaged cell: not text, or a number out of range
        return False
