"""One input's bytes → lines → decoded. Each read's frames go to the ingest queue together, with the credit the read
was made under; the ingest gives it back once it has committed those frames."""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Protocol

from .credits import SERIAL_CREDITS
from .frame import Decoded, Frame, Reject, Status, decode_line
from .line_assembler import LineAssembler
from .logs import LINE_SHOWN_BYTES, RateLimitedLog
from .metrics import Metrics
from .received import Received

READ_CHUNK = 16384  # a read's frames travel together to the ingest queue: this bounds one item


class Ingestor(Protocol):
    """Where a read's frames go: the ingest (ingest.Ingest.put), or a queue in tests."""

    def put(self, received: Received) -> None: ...


class LineHandler:
    """One input's bytes → lines → decoded; each read's frames go to the ingest queue together, with the credit
    the read was made under."""

    def __init__(self, name: str, ingest: Ingestor, metrics: Metrics, credits: int = SERIAL_CREDITS,
                 decode: Callable[[bytes], Decoded] = decode_line, trusted: bool = False) -> None:
        self.name = name
        self.trusted = trusted  # a port marked trusted (signing.md): its frames say so to the verifier
        self._decode = decode  # a CSV port's: room_csv.line_decoder
        self.credits = threading.Semaphore(credits)
        self._ingest = ingest
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
        self._ingest.put(Received(frames, received_ms, self.credits, self.trusted))
        return True

    def _reject(self, reason: str, count: int, line: bytes = b"") -> None:
        self._metrics.rejects.labels(reason).inc(count)
        # latin-1: one character per byte, so logs escapes each control or non-ASCII byte as itself (\x1b, \xff)
        self._log.event(logging.WARNING, "line_rejected", key=f"{self.name}/{reason}", input=self.name,
                        reason=reason, line=line[:LINE_SHOWN_BYTES].decode("latin-1"))
