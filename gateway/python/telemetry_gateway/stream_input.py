"""A file or stdin, read to its end (for replays and benchmarks)."""

from __future__ import annotations

import logging
import threading
from typing import Callable

from .line_handler import READ_CHUNK, LineHandler
from .logs import event


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
