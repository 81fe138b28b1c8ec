"""telemetry-gateway decode: what the gateway makes of some lines, one JSON object per line.

An operator's tool ("why is this board's data not stored?") and the common ground of the two gateways in the
differential test, which feeds both the same lines and compares what they print. Each line goes through the
decoder a serial port would use: v1 frames, status lines and legacy JSON by default, the room board's CSV lines
with --csv (PROTOCOL.md section 7; the port config keys source and columns as --source and --columns).

Input lines and the output text: gateway/contract/process.md, "decode".
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import BinaryIO, Callable, Iterable, Iterator, TextIO

from .frame import Decoded, Frame, Status, is_metric_key, is_source_name
from .room_csv import line_decoder
from .serial_port_entries import SerialPort
from .text_forms import number_text, quoted

PROG = "telemetry-gateway decode"
STDIN_PATH = "-"  # the port's path: none, the lines come from stdin


class UsageError(Exception):
    pass


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, allow_abbrev=False, description="Decode lines from stdin as the gateway does; one JSON "
                                "object per line on stdout (a frame, a status line or a reject with its reason).")
    p.add_argument("--csv", action="store_true", help="the lines of a room board's CSV port (format = \"csv\"); "
                   "needs --source and --columns")
    p.add_argument("--source", help="csv: the source the lines are stored under")
    p.add_argument("--columns", metavar="NAME,NAME...", help="csv: the metric of each field, in line order")
    return p


def port_from(args: argparse.Namespace) -> SerialPort:
    """The port whose decoder reads the lines, checked as the config checks a port table."""
    if not args.csv:
        for name in ("source", "columns"):
            if getattr(args, name) is not None:
                raise UsageError(f"--{name}: only a --csv port has {name}")
        return SerialPort(STDIN_PATH)
    if args.source is None:
        raise UsageError("--source: a csv port needs the source its lines are stored under")
    if not is_source_name(args.source):
        raise UsageError(f"--source: {quoted(args.source)} is not a source name ([A-Za-z0-9_-]{{1,32}})")
    if args.columns is None:
        raise UsageError("--columns: a csv port needs the metric name of each field")
    columns = [column.strip() for column in args.columns.split(",")]
    for index, column in enumerate(columns):
        if not is_metric_key(column):
            raise UsageError(f"--columns: {quoted(column)} is not a metric name ([a-z][a-z0-9_]{{0,15}}, not t)")
        if column in columns[:index]:
            raise UsageError(f"--columns: {quoted(column)} is listed twice")
    return SerialPort(STDIN_PATH, format="csv", source=args.source, columns=tuple(columns))


def line_content(line: bytes) -> bytes:
    """An input line without its ending: one LF, then one CR."""
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    return line


def _integer(n: int | None) -> str:
    return "null" if n is None else str(n)


def decoded_json(decoded: Decoded) -> str:
    """One decoder result as the vectors' `expect`, in compact JSON, keys in this order."""
    if isinstance(decoded, Frame):
        values = ",".join(f"[{quoted(metric)},{number_text(value)}]" for metric, value in decoded.values)
        text = (f'{{"kind":"frame","format":{quoted(decoded.format)},"source":{quoted(decoded.source)},'
                f'"seq":{_integer(decoded.seq)},"t":{_integer(decoded.t)},"values":[{values}]')
        signature = decoded.signature
        if signature is not None:
            text += (f',"counter":{signature.counter},"signed":"{signature.signed.hex().upper()}",'
                     f'"tag":"{signature.tag.hex().upper()}"')
        return text + "}"
    if isinstance(decoded, Status):
        return f'{{"kind":"status","text":{quoted(decoded.text)}}}'
    return f'{{"kind":"reject","reason":{quoted(decoded.reason)}}}'


def decode_lines(lines: Iterable[bytes], decode: Callable[[bytes], Decoded]) -> Iterator[str]:
    """Input lines (their endings included or not) → one JSON text each, without a newline."""
    for line in lines:
        yield decoded_json(decode(line_content(line)))


def main(argv: list[str] | None = None, stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """`telemetry-gateway decode [--csv --source S --columns a,b]`; stdin and stdout default to the process's."""
    try:
        args = parser().parse_args(argv)
    except SystemExit as stop:  # --help (0) or a usage error argparse already printed (2)
        return stop.code if isinstance(stop.code, int) else 0
    try:
        port = port_from(args)
    except UsageError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 2
    out = sys.stdout if stdout is None else stdout
    write = out.write
    try:
        # Iterating a binary stream splits at LF only. Writes are buffered (block-buffered into a pipe).
        for text in decode_lines(sys.stdin.buffer if stdin is None else stdin, line_decoder(port)):
            write(text)
            write("\n")
        out.flush()
    except BrokenPipeError:  # the reader left (`| head`): stop quietly, and let nothing flush at exit
        if stdout is None:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0
