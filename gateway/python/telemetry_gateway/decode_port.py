"""decode --port: a serial port's lines, decoded and judged as they come, until the port goes away, a signal,
--count lines or --seconds (gateway/contract/process.md, "decode"). Opened as the service opens a port (its kernel
buffer kept), never written to, never reopened; nothing is written to disk."""

from __future__ import annotations

import errno
import os
import re
import select
import signal
import time
from typing import Callable, TextIO

import serial

from .decode_verdicts import DecodeJudge
from .frame import Decoded, Reject
from .line_handler import READ_CHUNK
from .serial_input import KeepInputSerial
from .line_assembler import LineAssembler

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_PIECES = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # each line with its ending, or the unfinished rest


class PortUnavailable(Exception):
    pass


class _Signals:
    """SIGINT, SIGTERM and SIGHUP end the reading: each wakes the select() through a pipe."""

    def __init__(self) -> None:
        self.read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)
        self.caught = False
        self._old_handlers = {number: signal.signal(number, self._caught) for number in STOP_SIGNALS}
        self._old_wakeup = signal.set_wakeup_fd(self._write_fd)

    def _caught(self, _number, _frame) -> None:
        self.caught = True

    def close(self) -> None:
        signal.set_wakeup_fd(self._old_wakeup)
        for number, handler in self._old_handlers.items():
            signal.signal(number, handler)
        os.close(self.read_fd)
        os.close(self._write_fd)


def read_port(path: str, baud: int, decode: Callable[[bytes], Decoded], judge: DecodeJudge,
              write_line: Callable[[Decoded], None], out: TextIO, count: int | None,
              seconds: float | None) -> str:
    """Reads until the end; returns why it ended (decode_verdicts.ENDS). write_line prints one result (judged
    by the caller, through judge). PortUnavailable: the port did not open."""
    signals = _Signals()  # before the open: a signal meanwhile still ends the reading
    try:
        try:
            port = KeepInputSerial(path, baud, timeout=0)
        except (serial.SerialException, OSError, ValueError) as error:
            raise PortUnavailable(str(error)) from None
        try:
            return _read(port.fileno(), signals, decode, judge, write_line, out, count, seconds)
        finally:
            port.close()
    finally:
        signals.close()


def _read(fd: int, signals: _Signals, decode, judge: DecodeJudge, write_line, out: TextIO, count: int | None,
          seconds: float | None) -> str:
    deadline = None if seconds is None else time.monotonic() + seconds
    assembler = LineAssembler()
    while True:
        timeout = None if deadline is None else deadline - time.monotonic()
        if signals.caught:
            end = "signal"
            break
        if timeout is not None and timeout <= 0:
            end = "seconds"
            break
        readable, _, _ = select.select([fd, signals.read_fd], [], [], timeout)
        if signals.read_fd in readable:
            os.read(signals.read_fd, 64)
            continue
        if fd not in readable:
            continue
        try:
            data = os.read(fd, READ_CHUNK)
        except OSError as error:  # a pty whose other side closed: EIO
            if error.errno in (errno.EAGAIN, errno.EINTR):
                continue
            data = b""
        if not data:  # a vanished USB device reads 0 bytes
            end = "gone"
            break
        results = []
        for piece in _PIECES.findall(data):  # a line at a time: a too_long reject keeps its place among the lines
            lines, dropped = assembler.feed(piece)
            results += [Reject("too_long")] * dropped + [decode(line) for line in lines]
        if count is not None:
            results = results[:count - judge.counts["lines"]]
        for result in results:
            write_line(result)
        out.flush()  # each line as soon as it is read
        if count is not None and judge.counts["lines"] >= count:
            end = "count"
            break
    if end != "count" and assembler.reset():
        write_line(Reject("partial_line"))
        out.flush()
    return end
