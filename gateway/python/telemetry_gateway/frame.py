"""Frame decoder: v1 and signed (T2) frames, base-station status lines and legacy greenhouse JSON.

Implements firmware/protocol/PROTOCOL.md section 3 step by step; the step names (F1, J3, ...) are the spec's.
Pure functions: bytes in, a value out, never an exception for bad input.
"""

from __future__ import annotations

import binascii
import json
import math
import re
import struct
from dataclasses import dataclass
from typing import NamedTuple, Union

from .contract_constants import contract_number
from .reading_values import doubles_struct, pack_values, unpack_values
from .signed_frame import Signature, decode_payload

MAX_LINE_BYTES = contract_number("line_bytes_max")
SEQ_MODULUS = contract_number("seq_modulus")

_SOURCE = re.compile(rb"[A-Za-z0-9_-]{1,32}")
_SEQ = re.compile(rb"0|[1-9][0-9]{0,4}")
_KEY = re.compile(rb"[a-z][a-z0-9_]{0,15}")
_VALUE = re.compile(rb"[+-]?[0-9]+(?:\.[0-9]+)?")
_TIME = re.compile(rb"0|[1-9][0-9]{0,14}")
_VERSION = re.compile(rb"T[0-9]+")
_FRAME = re.compile(rb"\$([^*]*)\*([0-9A-F]{4})")
_BLANK = b" \t"
# The common frame in one match: T1, a valid source and seq, valid key=value pairs. It accepts a subset of what
# the step-by-step decoder accepts; anything else (and frames with t or a repeated key) takes the full path, so
# both paths give the same result for every line (a property test checks it).
_PAIR = rb"[a-z][a-z0-9_]{0,15}=[+-]?[0-9]+(?:\.[0-9]+)?"
_COMMON_FRAME = re.compile(rb"\$(T1,([A-Za-z0-9_-]{1,32}),(0|[1-9][0-9]{0,4}),(" + _PAIR + rb"(?:," + _PAIR +
                           rb")*))\*([0-9A-F]{4})")
_LEGACY_RESERVED = ("source", "destination", "action")
# The key layouts of common frames (a board sends the same keys in every frame), each with its metric names and
# the packing of its values, or None when the frame needs the full path (it has a t or a repeated key): checked
# once per layout, not per frame.
_common_layouts: dict[tuple[bytes, ...], tuple[str, struct.Struct] | None] = {}
_COMMON_LAYOUTS_MAX = 1024  # cleared past it: layouts from garbled lines never pile up
_UNSEEN = object()


class Frame(NamedTuple):  # a tuple: built for every line, so it must be cheap to build
    format: str  # "v1", "signed", "legacy" or "csv" (a CSV port's line: room_csv.py)
    source: str
    seq: int | None
    t: int | None  # Unix ms from the sender, or None: the gateway stamps the time of receipt
    # The values as the spool and the CQL writes take them (reading_values): packed once, here.
    metrics: str
    vals: bytes
    signature: Signature | None = None  # a signed frame's, until the verifier (signing.py) accepts it

    @classmethod
    def of(cls, format: str, source: str, seq: int | None, t: int | None,
           values: tuple[tuple[str, float], ...], signature: Signature | None = None) -> Frame:
        return cls(format, source, seq, t, *pack_values(values), signature)

    @property
    def values(self) -> tuple[tuple[str, float], ...]:
        return unpack_values(self.metrics, self.vals)


@dataclass(frozen=True)
class Status:
    text: str


@dataclass(frozen=True)
class Reject:
    reason: str


Decoded = Union[Frame, Status, Reject]


def is_source_name(name: str) -> bool:
    """The source rule (section 1), for names given outside a line, e.g. a CSV port's source in the config."""
    return name.isascii() and _SOURCE.fullmatch(name.encode("ascii")) is not None


def is_metric_key(name: str) -> bool:
    """The key rule without the reserved t: a name a metric may have, e.g. a CSV port's column."""
    return name != "t" and name.isascii() and _KEY.fullmatch(name.encode("ascii")) is not None


def crc16_ccitt_false(data: bytes) -> int:
    # binascii.crc_hqx is CRC-16/CCITT with a caller-given init: with 0xFFFF it is CCITT-FALSE.
    return binascii.crc_hqx(data, 0xFFFF)


def decode_line(line: bytes) -> Decoded:
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    if len(line) > MAX_LINE_BYTES:
        return Reject("too_long")
    if not line.strip(_BLANK):
        return Reject("empty")
    if line.startswith(b"#"):
        return Status(line[1:].strip(_BLANK).decode("latin-1"))
    dollar = line.rfind(b"$")
    if dollar >= 0:
        return _decode_v1(line[dollar:])
    if line.lstrip(_BLANK).startswith(b"{"):
        return _decode_legacy(line)
    return Reject("no_frame")


def _decode_v1(frame: bytes) -> Decoded:
    common = _COMMON_FRAME.fullmatch(frame)
    if common is not None:
        body, source, seq, pairs, crc_hex = common.groups()
        if crc16_ccitt_false(body) != int(crc_hex, 16):
            return Reject("bad_crc")
        fields = pairs.replace(b"=", b",").split(b",")  # key, value, key, value...: the match checked each pair
        keys = tuple(fields[0::2])
        layout = _common_layouts.get(keys, _UNSEEN)
        if layout is _UNSEEN:
            layout = _common_layout(keys)
        if layout is not None and int(seq) < SEQ_MODULUS:
            metrics, doubles = layout
            return Frame("v1", source.decode("ascii"), int(seq), None, metrics,
                         doubles.pack(*map(float, fields[1::2])))
    return _decode_v1_steps(frame)


def _common_layout(keys: tuple[bytes, ...]) -> tuple[str, struct.Struct] | None:
    if len(_common_layouts) >= _COMMON_LAYOUTS_MAX:
        _common_layouts.clear()
    common = b"t" not in keys and len(set(keys)) == len(keys)
    layout = _common_layouts[keys] = (b",".join(keys).decode("ascii"), doubles_struct(len(keys))) if common else None
    return layout


def _decode_v1_steps(frame: bytes) -> Decoded:
    match = _FRAME.fullmatch(frame)
    if match is None:
        return Reject("bad_syntax")
    body, crc_hex = match.groups()
    if crc16_ccitt_false(body) != int(crc_hex, 16):
        return Reject("bad_crc")
    fields = body.split(b",")
    if len(fields) < 3:
        return Reject("bad_syntax")
    version, source, seq = fields[0], fields[1], fields[2]
    if version == b"T2":
        return _decode_signed(fields)
    if version != b"T1":
        return Reject("bad_version" if _VERSION.fullmatch(version) else "bad_syntax")
    if not _SOURCE.fullmatch(source):
        return Reject("bad_source")
    if not _SEQ.fullmatch(seq) or int(seq) >= SEQ_MODULUS:
        return Reject("bad_seq")

    seen: set[bytes] = set()
    t = None
    values = []
    for field in fields[3:]:
        key, eq, value = field.partition(b"=")
        if not eq:
            return Reject("bad_syntax")
        if not _KEY.fullmatch(key):
            return Reject("bad_key")
        if key in seen:
            return Reject("duplicate_key")
        seen.add(key)
        if key == b"t":
            if not _TIME.fullmatch(value):
                return Reject("bad_time")
            t = int(value)
        elif _VALUE.fullmatch(value):
            values.append((key.decode("ascii"), float(value)))
        else:
            return Reject("bad_value")
    if not values:
        return Reject("no_values")
    return Frame.of("v1", source.decode("ascii"), int(seq), t, tuple(values))


def _decode_signed(fields: list[bytes]) -> Decoded:
    """S1-S5: T2, the source, the payload as hex."""
    if len(fields) != 3:
        return Reject("bad_syntax")
    if not _SOURCE.fullmatch(fields[1]):
        return Reject("bad_source")
    payload = decode_payload(fields[1], fields[2])
    if isinstance(payload, str):
        return Reject(payload)
    return Frame.of("signed", payload.source, payload.seq, None, payload.values, payload.signature)


def _reject_constant(name: str) -> None:
    raise ValueError(f"non-JSON constant {name}")


class _Members(list):
    """A JSON object's members in document order (a plain dict would hide repeated names)."""


def _decode_legacy(line: bytes) -> Decoded:
    # PROTOCOL.md J1: the line must be valid JSON first (bad_json); only then does a name twice in any of its
    # objects decide (duplicate_key), so the reason never depends on where a parser happens to notice.
    repeated = []

    def members_of(pairs: list[tuple[str, object]]) -> _Members:
        if len({name for name, _ in pairs}) != len(pairs):
            repeated.append(pairs)
        return _Members(pairs)

    try:  # every number the double nearest its text, sign included: -0 is -0.0, as in a T1 frame
        members = json.loads(line.decode("utf-8"), object_pairs_hook=members_of, parse_int=float,
                             parse_constant=_reject_constant)
    except ValueError:  # includes UnicodeDecodeError and json.JSONDecodeError
        return Reject("bad_json")
    if not isinstance(members, _Members):
        return Reject("bad_json")
    if repeated:
        return Reject("duplicate_key")
    obj = dict(members)

    source = obj.get("source")
    if not isinstance(source, str) or not is_source_name(source):  # ASCII first: "\ud800" cannot be encoded
        return Reject("bad_source")
    if obj.get("destination") != "C":
        return Reject("wrong_destination")
    values = []
    for name, value in members:
        if name in _LEGACY_RESERVED or not isinstance(value, float):  # every JSON number is a float here
            continue
        if not is_metric_key(name):
            return Reject("bad_key")
        if not math.isfinite(value):  # 1e999
            return Reject("bad_value")
        values.append((name, value))
    if not values:
        return Reject("no_values")
    return Frame.of("legacy", source, None, None, tuple(values))
