"""telemetry-gateway decode: what the gateway makes of some lines, one JSON object per line.

An operator's tool ("why is this board's data not stored?") and the common ground of the two gateways in the
differential test, which feeds both the same lines and compares what they print. Each line goes through the
decoder a serial port would use: v1 frames, status lines and legacy JSON by default, the room board's CSV lines
with --csv (PROTOCOL.md section 7; the port config keys source and columns as --source and --columns). With a
keys file each frame also gets its verdict; --port reads a serial port instead of stdin (decode_port.py).

Input lines and the output text: gateway/contract/process.md, "decode".
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import BinaryIO, Callable, Iterable, Iterator, TextIO

from .config import load_config
from .config_error import ConfigError
from .decode_verdicts import DecodeJudge
from .frame import Decoded, Frame, Status, is_metric_key, is_source_name
from .room_csv import line_decoder
from .signing_config import signing_policy
from .serial_port_entries import SerialPort
from .text_forms import number_text, quoted

PROG = "telemetry-gateway decode"
STDIN_PATH = "-"  # the port's path: none, the lines come from stdin
_WHOLE = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?")


class UsageError(Exception):
    pass


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, allow_abbrev=False, description="Decode lines from stdin (or a serial "
                                "port: --port) as the gateway does; one JSON object per line on stdout (a frame, a "
                                "status line or a reject with its reason), a frame with its verdict when a keys file "
                                "is given (--keys, or --config's [signing]). Writes nothing to disk.")
    p.add_argument("--csv", action="store_true", help="the lines of a room board's CSV port (format = \"csv\"); "
                   "needs --source and --columns")
    p.add_argument("--source", help="csv: the source the lines are stored under")
    p.add_argument("--columns", metavar="NAME,NAME...", help="csv: the metric of each field, in line order")
    p.add_argument("--keys", metavar="FILE", help="keys file: each frame's verdict (accepted, bad_mac, replay, "
                   "unsigned), counters of this run only")
    p.add_argument("--config", metavar="FILE", help="TOML config: its [signing] keys and settings (and serial.baud)")
    p.add_argument("--port", metavar="PATH[@BAUD]", help="read this serial port instead of stdin, until it goes "
                   "away, Ctrl-C, --count or --seconds; a summary line on stderr at the end")
    p.add_argument("--count", metavar="N", help="--port: stop after N lines")
    p.add_argument("--seconds", metavar="S", help="--port: stop after S seconds (a decimal number)")
    return p


def check_reading(args: argparse.Namespace) -> None:
    """--count and --seconds: with --port only, and above 0; made numbers here."""
    for name, form, what in (("count", _WHOLE, "a whole number"), ("seconds", _DECIMAL, "a decimal number")):
        text = getattr(args, name)
        if text is None:
            continue
        if args.port is None:
            raise UsageError(f"--{name}: only with --port")
        if not form.fullmatch(text) or float(text) <= 0:
            raise UsageError(f"--{name}: must be {what} above 0, not {quoted(text)}")
        setattr(args, name, int(text) if name == "count" else float(text))


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


def decoded_json(decoded: Decoded, verdict: str | None = None) -> str:
    """One decoder result as the vectors' `expect`, in compact JSON, keys in this order; a frame's verdict last."""
    if isinstance(decoded, Frame):
        values = ",".join(f"[{quoted(metric)},{number_text(value)}]" for metric, value in decoded.values)
        text = (f'{{"kind":"frame","format":{quoted(decoded.format)},"source":{quoted(decoded.source)},'
                f'"seq":{_integer(decoded.seq)},"t":{_integer(decoded.t)},"values":[{values}]')
        signature = decoded.signature
        if signature is not None:
            text += (f',"counter":{signature.counter},"signed":"{signature.signed.hex().upper()}",'
                     f'"tag":"{signature.tag.hex().upper()}"')
        if verdict is not None:
            text += f',"verdict":"{verdict}"'
        return text + "}"
    if isinstance(decoded, Status):
        return f'{{"kind":"status","text":{quoted(decoded.text)}}}'
    return f'{{"kind":"reject","reason":{quoted(decoded.reason)}}}'


def decode_lines(lines: Iterable[bytes], decode: Callable[[bytes], Decoded],
                 judge: DecodeJudge | None = None) -> Iterator[str]:
    """Input lines (their endings included or not) → one JSON text each, without a newline."""
    judge = judge or DecodeJudge(None)
    for line in lines:
        decoded = decode(line_content(line))
        yield decoded_json(decoded, judge.judge(decoded))


def judge_from(args: argparse.Namespace):
    """The judge of --keys/--config, and the --port to read (or None): the config read as process.md says (its
    file only from --config); ConfigError as for any command."""
    if args.config is None and args.keys is None and args.port is None:
        return DecodeJudge(None), None
    overrides: dict[str, dict[str, object]] = {}
    if args.keys is not None:
        overrides["signing"] = {"keys_file": args.keys}
    if args.port is not None:
        overrides["serial"] = {"ports": [args.port]}
    config = load_config(args.config, overrides=overrides)
    policy = signing_policy(config)
    keyed = bool(config.signing.keys_file or config.signing.keys_credential)
    return DecodeJudge(policy if keyed else None), (config.serial.ports[0] if args.port is not None else None)


def main(argv: list[str] | None = None, stdin: BinaryIO | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    """`telemetry-gateway decode [options]`; stdin, stdout and stderr default to the process's."""
    try:
        args = parser().parse_args(argv)
    except SystemExit as stop:  # --help (0) or a usage error argparse already printed (2)
        return stop.code if isinstance(stop.code, int) else 0
    err = sys.stderr if stderr is None else stderr
    try:
        port = port_from(args)
        check_reading(args)
    except UsageError as error:
        print(f"{PROG}: {error}", file=err)
        return 2
    try:
        judge, serial_port = judge_from(args)
    except ConfigError as error:
        print(f"telemetry-gateway: {error}", file=err)
        return 2
    out = sys.stdout if stdout is None else stdout
    write = out.write
    try:
        if serial_port is not None:
            return _read_port(serial_port, line_decoder(port), judge, args, out, err)
        # Iterating a binary stream splits at LF only. Writes are buffered (block-buffered into a pipe).
        for text in decode_lines(sys.stdin.buffer if stdin is None else stdin, line_decoder(port), judge):
            write(text)
            write("\n")
        out.flush()
    except BrokenPipeError:  # the reader left (`| head`): stop quietly, and let nothing flush at exit
        if stdout is None:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


def _read_port(serial_port: SerialPort, decode: Callable[[bytes], Decoded], judge: DecodeJudge,
               args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .decode_port import PortUnavailable, read_port  # pyserial: only for --port

    def write_line(decoded: Decoded) -> None:
        out.write(decoded_json(decoded, judge.judge(decoded)) + "\n")

    path = serial_port.path
    try:
        end = read_port(path, serial_port.baud, decode, judge, write_line, out, args.count, args.seconds)
    except PortUnavailable as error:
        print(f"{PROG}: --port: cannot open {path}: {error}", file=err)
        return 1
    print(f"{PROG}: {judge.summary(path, end)}", file=err, flush=True)
    return 0
