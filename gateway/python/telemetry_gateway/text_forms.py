"""How values are written as text in log fields and in `decode`'s output (gateway/contract/logs.md, "Values")."""

from __future__ import annotations

import math
from decimal import Decimal

_NAMED = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_PLAIN_BANNED = set('"=\\')


def _escape(char: str) -> str:
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0x20 <= code < 0x7F:
        return char
    if code > 0xFFFF:  # a surrogate pair, as UTF-16 spells it
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def quoted(text: str) -> str:
    """A JSON string of ASCII only: every control character, DEL and non-ASCII character escaped."""
    return '"' + "".join(_escape(char) for char in text) + '"'


def number_text(x: float | int) -> str:
    """The shortest decimal that reads back as the same double; an exponent only below 1e-6 and from 1e21 on."""
    if isinstance(x, int) and abs(x) < 10**21:
        return str(x)
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1, x) < 0 else "0"  # "-0" reads back as an integer 0 in some readers
    sign, digit_tuple, exponent = Decimal(repr(x)).normalize().as_tuple()  # repr: the shortest round-trip digits
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + exponent  # x = 0.digits × 10^point
    minus = "-" if sign else ""
    if len(digits) <= point <= 21:
        return minus + digits + "0" * (point - len(digits))
    if 0 < point <= 21:
        return f"{minus}{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return f"{minus}0.{'0' * -point}{digits}"
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{minus}{mantissa}e{'+' if point - 1 >= 0 else '-'}{abs(point - 1)}"


def field_text(value: object) -> str | None:
    """A log field's value as written; None: the field is left out (an absent value)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return number_text(value)
    text = str(value)
    if text and all(0x21 <= ord(c) <= 0x7E for c in text) and not _PLAIN_BANNED.intersection(text):
        return text
    return quoted(text)
