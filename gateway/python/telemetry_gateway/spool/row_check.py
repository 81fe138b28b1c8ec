"""The checksum of a frame row (gateway/contract/spool.md, "Row checksums"): CRC-32 (zlib's) of the row's columns
but its id, stored as a signed 32-bit integer so that SQLite keeps it in 4 bytes. Inline loops over zlib and
struct: these run for every frame written and read, where a call per column would cost more than the commit."""

from __future__ import annotations

import struct
import zlib

_TIMES = struct.Struct(">qq")
_ZERO = b"\0"
DAMAGED_CELL = (ValueError, TypeError, struct.error)  # not text, not UTF-8, a number out of range, another type


def signed(crc: int) -> int:
    return (crc ^ 0x80000000) - 0x80000000


def crc_bytes(source: str | bytes, ts_ms: int, received_ms: int, metrics: str | bytes, vals: bytes) -> bytes:
    """The bytes checksummed: source, 0, ts_ms and received_ms (8 bytes big-endian each), metrics, 0, vals."""
    source = source.encode("utf-8") if isinstance(source, str) else source
    metrics = metrics.encode("ascii") if isinstance(metrics, str) else metrics
    return b"".join((source, _ZERO, _TIMES.pack(ts_ms, received_ms), metrics, _ZERO, vals))


def frame_crc(source: str | bytes, ts_ms: int, received_ms: int, metrics: str | bytes, vals: bytes) -> int:
    return signed(zlib.crc32(crc_bytes(source, ts_ms, received_ms, metrics, vals)))


def with_crcs(rows: list[tuple]) -> list[tuple]:
    """Rows (..., source, ts_ms, received_ms, metrics, vals) of text columns as str, each with its crc appended."""
    crc32, pack = zlib.crc32, _TIMES.pack
    return [(*row, (crc32(b"".join((row[-5].encode(), _ZERO, pack(row[-4], row[-3]), row[-2].encode(), _ZERO,
                                    row[-1]))) ^ 0x80000000) - 0x80000000) for row in rows]


def checked(rows: list[tuple]) -> tuple[list[tuple], list[tuple]]:
    """Rows (id, source, ts_ms, received_ms, metrics, vals, crc), text as bytes, split into the intact ones (text
    decoded, crc left off) and the damaged ones (as read). A NULL crc (a row written before checksums) is not
    checked."""
    crc32, pack = zlib.crc32, _TIMES.pack
    intact, damaged = [], []
    for row in rows:
        id_, source, ts_ms, received_ms, metrics, vals, crc = row
        try:
            if crc is not None and crc != (crc32(b"".join((source, _ZERO, pack(ts_ms, received_ms), metrics, _ZERO,
                                                            vals))) ^ 0x80000000) - 0x80000000:
                raise ValueError
            intact.append((id_, source.decode(), ts_ms, received_ms, metrics.decode(), vals))
        except DAMAGED_CELL:
            damaged.append(row)
    return intact, damaged


def crc_matches(crc: object, source: str | bytes, ts_ms: int, received_ms: int, metrics: str | bytes,
                vals: bytes) -> bool:
    """Whether a row's stored crc vouches for its columns: NULL (written before checksums) passes unchecked."""
    if crc is None:
        return True
    if type(crc) is not int or not isinstance(vals, bytes):
        return False
    try:
        return crc == frame_crc(source, ts_ms, received_ms, metrics, vals)
    except DAMAGED_CELL:
        return False
