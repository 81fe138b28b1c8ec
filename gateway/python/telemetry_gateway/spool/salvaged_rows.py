"""Each row read from a damaged spool checked against the spool's schema (gateway/contract/spool.md, "A damaged
spool"): a damaged cell can hold another type, a broken text or a value out of range; such a row is not kept."""

from __future__ import annotations

import re

from .row_check import crc_matches

_MAX_EXACT = (1 << 53) - 1
_METRICS = re.compile(r"[a-z][a-z0-9_]{0,15}(,[a-z][a-z0-9_]{0,15})*")
_FINGERPRINT = re.compile(r"([0-9a-f]{16})?")


def _text(value: object) -> str | None:
    """A text cell (read as bytes) as text: non-empty UTF-8 without control characters, else None."""
    if not isinstance(value, bytes) or not value:
        return None
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if any(ord(char) < 32 or char == "\x7f" for char in text) else text


def _count(value: object) -> bool:
    """An integer from 0 to 2^53 - 1 (exact as a double: ids, timestamps)."""
    return isinstance(value, int) and 0 <= value <= _MAX_EXACT


def _valid_frame(row: tuple) -> tuple | None:
    """(id, source, ts_ms, received_ms, metrics, vals, crc); a row of a file older than format 6 has no crc: None."""
    if len(row) == 7:
        row = (*row[:6], None, row[6])
    id_, source, ts_ms, received_ms, metrics, vals, crc, types = row
    source, metrics = _text(source), _text(metrics)
    if (types == b"texttextblob" and _count(id_) and id_ > 0 and source and _count(ts_ms) and _count(received_ms)
            and metrics and _METRICS.fullmatch(metrics) and len(vals) == 8 * (metrics.count(",") + 1)
            and crc_matches(crc, source, ts_ms, received_ms, metrics, vals)):
        return id_, source, ts_ms, received_ms, metrics, vals, crc
    return None


def _valid_pair(row: tuple) -> tuple | None:
    source, values = _text(row[0]), row[1:-1]
    ok = row[-1] == b"text" and source and all(_count(value) or _count(-value) for value in values)
    return (source, *values) if ok else None


def _valid_counter(row: tuple) -> tuple | None:
    """(source, counter, key fingerprint); a format 4 row has none: ''."""
    if len(row) == 3:
        row = (row[0], row[1], b"", row[2] + b"text")
    source, counter, fingerprint, types = row
    source = _text(source)
    if types != b"texttext" or not source or not isinstance(counter, int) or abs(counter) > _MAX_EXACT:
        return None
    fingerprint = fingerprint.decode("ascii", "replace") if isinstance(fingerprint, bytes) else ""
    return (source, counter, fingerprint) if _FINGERPRINT.fullmatch(fingerprint) else None


# Each returns the row with its text decoded, or None for a row that cannot be an intact one.
VALIDATORS = {"frames": _valid_frame, "receipt_stamps": _valid_pair, "source_seqs": _valid_pair,
               "source_counters": _valid_counter}
