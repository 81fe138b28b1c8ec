"""Bytes from a serial port → complete lines, with a bounded buffer.

A board that never sends '\\n' (wrong baud rate, a stuck line) must not grow memory: once a partial line passes
the limit it is dropped up to the next newline and reported as one too-long line.
"""

from __future__ import annotations

from .frame import MAX_LINE_BYTES

# A maximal line and its optional '\r' (the '\n' is not counted); anything longer is rejected by the decoder.
DEFAULT_LIMIT = MAX_LINE_BYTES + 1


class LineAssembler:
    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self._limit = limit
        self._partial = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> tuple[list[bytes], int]:
        """Returns the lines completed by data (with their '\\n') and how many over-long lines were dropped."""
        lines: list[bytes] = []
        dropped = 0
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self._discarding:
                self._discarding = False
            elif len(self._partial) + end - start > self._limit:
                dropped += 1
            elif self._partial:
                self._partial += data[start:end + 1]
                lines.append(bytes(self._partial))
            else:
                lines.append(data[start:end + 1])
            self._partial.clear()
            start = end + 1
        rest = data[start:]
        if not self._discarding:
            if len(self._partial) + len(rest) > self._limit:
                self._partial.clear()
                self._discarding = True
                dropped += 1
            else:
                self._partial += rest
        return lines, dropped

    def reset(self) -> None:
        """Forget a partial line, e.g. after the port was reopened."""
        self._partial.clear()
        self._discarding = False
