"""v1 frame lines as a board prints them, written from firmware/protocol/PROTOCOL.md section 1 (and proven against
its vectors, encode.json and crc.json). Pure functions; input that would not decode is refused with ValueError,
so a simulated board never prints a line a correct gateway must reject (damage is added on purpose, elsewhere)."""

from __future__ import annotations

import binascii
import math
import re
from decimal import Decimal
from typing import Iterable, Union

# PROTOCOL.md section 1, rule by rule.
SOURCE_RULE = re.compile(r"[A-Za-z0-9_-]{1,32}")
KEY_RULE = re.compile(r"[a-z][a-z0-9_]{0,15}")
VALUE_RULE = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")
TIME_RULE = re.compile(r"0|[1-9][0-9]{0,14}")
SEQ_MODULUS = 65536
MAX_LINE_BYTES = 200  # not counting the terminator

ValueText = Union[str, int, float]


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor)."""
    # binascii.crc_hqx is CRC-16/CCITT with a caller-given init: with 0xFFFF it is CCITT-FALSE.
    return binascii.crc_hqx(data, 0xFFFF)


def format_value(value: ValueText) -> str:
    """Decimal text for a value: a string is checked and kept as given, a number gets its shortest exact form."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool):
        raise ValueError("a boolean is not a metric value")
    elif isinstance(value, int):
        text = str(value)
    elif math.isfinite(value):
        # repr gives the shortest round-tripping digits; Decimal's 'f' format spells them without an exponent.
        text = format(Decimal(repr(value)), "f")
    else:
        raise ValueError(f"value {value!r} is not finite")
    if not VALUE_RULE.fullmatch(text):
        raise ValueError(f"value {text!r} is not a decimal number")
    return text


def encode_frame(source: str, seq: int, values: Iterable[tuple[str, ValueText]], t: int | None = None) -> bytes:
    """One v1 frame line, `\\n` included: `t` (when given) first, then the metrics in the order given."""
    if not SOURCE_RULE.fullmatch(source):
        raise ValueError(f"bad source {source!r}")
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < SEQ_MODULUS:
        raise ValueError(f"seq {seq} outside 0..65535")
    pairs = []
    if t is not None:
        if isinstance(t, bool) or not isinstance(t, int) or not TIME_RULE.fullmatch(str(t)):
            raise ValueError(f"bad time {t!r}")
        pairs.append(f"t={t}")
    keys = set()
    for key, value in values:
        if key == "t" or not KEY_RULE.fullmatch(key) or key in keys:
            raise ValueError(f"bad or repeated key {key!r}")
        keys.add(key)
        pairs.append(f"{key}={format_value(value)}")
    if not keys:
        raise ValueError("a frame needs at least one metric")
    body = ",".join([f"T1,{source},{seq}", *pairs])
    line = f"${body}*{crc16_ccitt_false(body.encode('ascii')):04X}\n".encode("ascii")
    if len(line) - 1 > MAX_LINE_BYTES:
        raise ValueError(f"frame is {len(line) - 1} bytes, over {MAX_LINE_BYTES}")
    return line
