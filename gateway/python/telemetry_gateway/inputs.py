"""Where lines come from: serial ports (reopened with backoff when a device goes away), or a file / stdin."""

from __future__ import annotations

import logging
import queue
import sys
import threading
import time
from typing import BinaryIO, Callable

import serial

from .frame import Frame, Reject, Status, decode_line
from .ingest import Received
from .line_assembler import LineAssembler
from .logs import RateLimitedLog, event
from .metrics import Metrics

READ_CHUNK = 16384  # a read's frames travel together to the ingest queue: this bounds one item


class LineHandler:
    """One input's bytes → lines → decoded; each read's frames go to the ingest queue together (blocking while it
    is full)."""

    def __init__(self, name: str, frames: queue.Queue, metrics: Metrics, stop: threading.Event) -> None:
        self.name = name
        self._frames = frames
        self._metrics = metrics
        self._stop = stop
        self._log = RateLimitedLog()
        self._lines = metrics.lines_read.labels(name)
        self._assembler = LineAssembler()

    def feed(self, data: bytes) -> None:
        received_ms = int(time.time() * 1000)  # every line of a read arrived by the time read() returned
        lines, dropped = self._assembler.feed(data)
        if dropped:
            self._lines.inc(dropped)
            self._reject("too_long", dropped)
        self._handle(lines, received_ms)

    def restart(self) -> None:
        """The input was reopened: a partial line from before belongs to no frame."""
        self._assembler.reset()

    def finish(self) -> None:
        """End of input: a last line without its newline still counts."""
        lines, _ = self._assembler.feed(b"\n")
        self._handle([line for line in lines if line.strip()], int(time.time() * 1000))

    def _handle(self, lines: list[bytes], received_ms: int) -> None:
        if not lines:
            return
        self._lines.inc(len(lines))
        frames = []
        for line in lines:
            result = decode_line(line)
            if isinstance(result, Frame):
                frames.append(result)
            elif isinstance(result, Status):
                self._metrics.status_lines.labels(self.name).inc()
                self._log.event(logging.INFO, "status_line", key=self.name, input=self.name, text=result.text)
            else:
                assert isinstance(result, Reject)
                self._reject(result.reason, 1, line)
        # One hand-over per read, not per frame: the queue's locks and wake-ups cost more than decoding.
        item = Received(frames, received_ms)
        while frames and not self._stop.is_set():
            try:
                self._frames.put(item, timeout=0.5)
                return
            except queue.Full:
                continue

    def _reject(self, reason: str, count: int, line: bytes = b"") -> None:
        self._metrics.rejects.labels(reason).inc(count)
        self._log.event(logging.WARNING, "line_rejected", key=f"{self.name}/{reason}", input=self.name,
                        reason=reason, line=line[:80].decode("latin-1").rstrip())


class SerialInput:
    def __init__(self, path: str, baud: int, handler: LineHandler, stop: threading.Event,
                 reopen_max_s: float, up_gauge) -> None:
        self.path, self.baud = path, baud
        self._handler = handler
        self._stop = stop
        self._reopen_max = reopen_max_s
        self._up = up_gauge
        self._log = RateLimitedLog(interval_s=60)

    def run(self) -> None:
        attempts = 0
        while not self._stop.is_set():
            try:
                port = serial.Serial(self.path, self.baud, timeout=0.2)
            except (serial.SerialException, OSError, ValueError) as error:
                attempts += 1
                self._up.set(0)
                self._log.event(logging.WARNING, "serial_unavailable", key=self.path, port=self.path,
                                error=str(error)[:160], action="retrying with backoff")
                self._stop.wait(min(self._reopen_max, 0.2 * 2 ** min(attempts, 8)))
                continue
            attempts = 0
            self._up.set(1)
            event(logging.INFO, "serial_open", port=self.path, baud=self.baud)
            try:
                self._read(port)
            except (serial.SerialException, OSError) as error:
                event(logging.WARNING, "serial_lost", port=self.path, error=str(error)[:160],
                      action="reopening when the device is back")
            finally:
                self._up.set(0)
                port.close()  # pyserial leaves is_open set after a vanished device

    def _read(self, port: serial.Serial) -> None:
        # Bytes already waiting in the OS buffer are frames the board sent meanwhile: read them, don't flush.
        self._handler.restart()
        while not self._stop.is_set():
            data = port.read(min(READ_CHUNK, max(1, port.in_waiting)))
            if data:
                self._handler.feed(data)


class StreamInput:
    """A file or stdin, read to its end (for replays and benchmarks)."""

    def __init__(self, path: str, handler: LineHandler, stop: threading.Event,
                 on_end: Callable[[], None]) -> None:
        self.path = path
        self._handler = handler
        self._stop = stop
        self._on_end = on_end

    def run(self) -> None:
        stream: BinaryIO = sys.stdin.buffer if self.path == "-" else open(self.path, "rb")
        try:
            while not self._stop.is_set():
                data = stream.read1(READ_CHUNK)
                if not data:
                    break
                self._handler.feed(data)
            self._handler.finish()
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()
            event(logging.INFO, "input_ended", input=self.path)
            self._on_end()
