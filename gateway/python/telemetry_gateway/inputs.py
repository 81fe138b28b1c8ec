"""Where lines come from: serial ports (reopened with backoff when a device goes away), or a file / stdin."""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from typing import Callable

import serial

from .contract_constants import contract_number, contract_seconds
from .frame import Decoded, Frame, Reject, Status, decode_line
from .received import Received
from .reopen_schedule import ReopenSchedule
from .line_assembler import LineAssembler
from .logs import ERROR_CHARS, LINE_SHOWN_BYTES, LONG_INTERVAL_S, RateLimitedLog, event
from .metrics import Metrics

READ_CHUNK = 16384  # a read's frames travel together to the ingest queue: this bounds one item
# Reads an input may hold in memory, not yet spooled: a read needs a credit, and the ingest gives it back once the
# read's frames are committed. A serial port's bytes are safe in the kernel until read, so a crash loses at most
# these reads (one being committed, one waiting: a few ms of input); while the spool has no room the credits are
# held back and reading pauses with nothing in memory. A file can be replayed: it may read further ahead.
SERIAL_CREDITS = contract_number("serial_read_credits")
STREAM_CREDITS = contract_number("stream_read_credits")
# How often a vanished port's path is checked: reopened as soon as it is back.
WAIT_FOR_DEVICE_S = contract_seconds("device_watch_ms")


class KeepInputSerial(serial.Serial):
    """pyserial's open() flushes the kernel's input buffer (tcflush). What it holds was sent by the board while no
    process read the port, e.g. during a gateway restart: keep it. A new device (a replug) brings an empty buffer."""

    _opening = False

    def open(self) -> None:
        self._opening = True
        try:
            super().open()
        finally:
            self._opening = False

    def _reset_input_buffer(self) -> None:
        if not self._opening:
            super()._reset_input_buffer()


class LineHandler:
    """One input's bytes → lines → decoded; each read's frames go to the ingest queue together, with the credit
    the read was made under."""

    def __init__(self, name: str, frames: queue.Queue, metrics: Metrics, credits: int = SERIAL_CREDITS,
                 decode: Callable[[bytes], Decoded] = decode_line, trusted: bool = False) -> None:
        self.name = name
        self.trusted = trusted  # a port marked trusted (signing.md): its frames say so to the verifier
        self._decode = decode  # a CSV port's: room_csv.line_decoder
        self.credits = threading.Semaphore(credits)
        self._frames = frames
        self._metrics = metrics
        self._log = RateLimitedLog()
        self._lines = metrics.lines_read.labels(name)
        self._assembler = LineAssembler()

    def feed(self, data: bytes) -> bool:
        """One read's bytes, read under one of self.credits. True: its frames went to the ingest, which gives the
        credit back once they are spooled; False: the caller gives it back."""
        received_ms = int(time.time() * 1000)  # every line of a read arrived by the time read() returned
        lines, dropped = self._assembler.feed(data)
        if dropped:
            self._lines.inc(dropped)
            self._reject("too_long", dropped)
        return self._handle(lines, received_ms)

    def restart(self) -> None:
        """The input was reopened: a partial line from before belongs to no frame (counted, not silently lost)."""
        lost = self._assembler.reset()
        if lost:
            self._lines.inc(lost)
            self._reject("partial_line", lost)

    def finish(self) -> None:
        """End of input: a last line without its newline still counts."""
        lines, _ = self._assembler.feed(b"\n")  # a partial line is within the limit: nothing is dropped here
        # Already in memory and no read follows: handed over without waiting for a credit (the ingest may hold
        # them back while the spool has no room); the one it gives back is never used.
        self._handle(lines, int(time.time() * 1000))

    def _handle(self, lines: list[bytes], received_ms: int) -> bool:
        """Decodes; hands the frames to the ingest with the read's credit. False: nothing handed over (the caller
        keeps the credit)."""
        if not lines:
            return False
        self._lines.inc(len(lines))
        frames = []
        for line in lines:
            result = self._decode(line)
            if isinstance(result, Frame):
                frames.append(result)
            elif isinstance(result, Status):
                self._metrics.status_lines.labels(self.name).inc()
                self._log.event(logging.INFO, "status_line", key=self.name, input=self.name, text=result.text)
            else:
                assert isinstance(result, Reject)
                self._reject(result.reason, 1, line)
        if not frames:
            return False
        # One hand-over per read, not per frame: the queue's locks and wake-ups cost more than decoding. The queue
        # itself is unbounded: the credits bound it, and a read is never held back (or dropped) once made.
        self._frames.put(Received(frames, received_ms, self.credits, self.trusted))
        return True

    def _reject(self, reason: str, count: int, line: bytes = b"") -> None:
        self._metrics.rejects.labels(reason).inc(count)
        # latin-1: one character per byte, so logs escapes each control or non-ASCII byte as itself (\x1b, \xff)
        self._log.event(logging.WARNING, "line_rejected", key=f"{self.name}/{reason}", input=self.name,
                        reason=reason, line=line[:LINE_SHOWN_BYTES].decode("latin-1"))


class SerialInput:
    def __init__(self, path: str, baud: int, handler: LineHandler, stop: threading.Event,
                 backoff: Callable[[int], float], up_gauge) -> None:
        self.path, self.baud = path, baud
        self._handler = handler
        self._stop = stop
        self._backoff = backoff
        self._up = up_gauge
        self._log = RateLimitedLog(interval_s=LONG_INTERVAL_S)

    def run(self) -> None:
        schedule = ReopenSchedule(self._backoff, WAIT_FOR_DEVICE_S)
        while not self._stop.is_set():
            if not os.path.exists(self.path):  # unplugged: watch the path, no backoff, reopen the moment it is back
                self._up.set(0)
                self._log.event(logging.WARNING, "serial_absent", key=self.path, port=self.path,
                                action="waiting for the device; reopened as soon as it appears")
                self._stop.wait(schedule.wait_s("absent"))
                continue
            try:
                port = KeepInputSerial(self.path, self.baud, timeout=0.2)
            except (serial.SerialException, OSError, ValueError) as error:
                self._up.set(0)
                self._log.event(logging.WARNING, "serial_unavailable", key=self.path, port=self.path,
                                error=str(error)[:ERROR_CHARS], action="retrying with backoff")
                self._stop.wait(schedule.wait_s("fails"))
                continue
            schedule.wait_s("opens")  # once the port is lost, it is tried again at once
            self._up.set(1)
            event(logging.INFO, "serial_open", port=self.path, baud=self.baud)
            try:
                self._read(port)
            except (serial.SerialException, OSError) as error:
                event(logging.WARNING, "serial_lost", port=self.path, error=str(error)[:ERROR_CHARS],
                      action="reopening when the device is back")
            finally:
                self._up.set(0)
                port.close()  # pyserial leaves is_open set after a vanished device

    def _read(self, port: serial.Serial) -> None:
        self._handler.restart()
        credits = self._handler.credits
        while not self._stop.is_set():
            if not credits.acquire(timeout=0.2):
                continue  # the spool has no room, or the ingest is behind: the bytes wait in the kernel
            try:
                data = port.read(min(READ_CHUNK, max(1, port.in_waiting)))
            except BaseException:
                credits.release()
                raise
            if not (data and self._handler.feed(data)):
                credits.release()


class StreamInput:
    """A file or stdin, read to its end (for replays and benchmarks)."""

    def __init__(self, path: str, handler: LineHandler, stop: threading.Event,
                 on_end: Callable[[], None]) -> None:
        self.path = path
        self._handler = handler
        self._stop = stop
        self._on_end = on_end

    def run(self) -> None:
        # Unbuffered: a read blocked on a silent stdin holds no lock that the interpreter's exit would wait for.
        stream = open(0 if self.path == "-" else self.path, "rb", buffering=0, closefd=self.path != "-")
        try:
            credits = self._handler.credits
            while not self._stop.is_set():
                if not credits.acquire(timeout=0.2):
                    continue
                data = stream.read(READ_CHUNK)
                if not data:
                    credits.release()
                    break
                if not self._handler.feed(data):
                    credits.release()
            self._handler.finish()
        finally:
            stream.close()
            event(logging.INFO, "input_ended", input=self.path)
            self._on_end()
