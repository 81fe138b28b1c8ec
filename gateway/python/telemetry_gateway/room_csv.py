"""The room board's CSV lines (firmware/protocol/PROTOCOL.md section 7): `light,temperature` as Arduino prints
them, read from a port configured as format = "csv" with its source and column names.

Pure: bytes in, a frame or a reject out, never an exception. The line carries no source, seq or time: the frame
has the port's source, no seq (so no duplicate or gap tracking) and is stamped on receipt.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Union

from .frame import MAX_LINE_BYTES, Decoded, Frame, Reject, decode_line
from .serial_port_entries import SerialPort

# What Arduino's print(float) and dtostrf() write: an optional sign, digits, an optional fraction.
_NUMBER = re.compile(rb"[+-]?[0-9]+(?:\.[0-9]+)?")
_BLANK = b" \t"  # dtostrf pads to its width with spaces


def decode_csv_line(line: bytes, source: str, columns: tuple[str, ...]) -> Union[Frame, Reject]:
    line = line.removesuffix(b"\n").removesuffix(b"\r")
    if len(line) > MAX_LINE_BYTES:
        return Reject("too_long")
    fields = line.split(b",")
    if len(fields) != len(columns):
        return Reject("csv_column_count")
    values = []
    for column, field in zip(columns, fields):
        text = field.strip(_BLANK)
        if not text:
            return Reject("csv_empty_field")
        if not _NUMBER.fullmatch(text):
            return Reject("csv_bad_number")  # also nan, inf, an exponent, a bare ".5"
        number = float(text)
        if not math.isfinite(number):  # cannot happen within 200 bytes; kept so no inf is ever stored
            return Reject("csv_bad_number")
        values.append((column, number))
    return Frame.of("csv", source, None, None, tuple(values))


def line_decoder(port: SerialPort) -> Callable[[bytes], Decoded]:
    """How the lines of this port are decoded."""
    if port.format == "csv":
        return lambda line: decode_csv_line(line, port.source, port.columns)
    return decode_line
