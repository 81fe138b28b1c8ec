"""Bytes from a serial port → complete lines, with a bounded buffer.

CR, LF and CRLF all end a line: boards differ (Serial.println sends CRLF, some send CR alone, and a CR-only board
would otherwise put several frames on one "line" of which the decoder keeps only the last). A CRLF split across
two reads is still one ending: the LF then ends an empty line, and empty lines are not lines. Lines are returned
without their ending.

Nothing is dropped silently. A board that never ends a line (wrong baud rate, a stuck line) must not grow memory:
once a partial line passes the limit it is dropped up to the next line ending and reported as one too-long line.
A partial line still waiting when the input is reset (the port was reopened) is reported by reset().
"""

from __future__ import annotations

from .frame import MAX_LINE_BYTES

DEFAULT_LIMIT = MAX_LINE_BYTES  # lines come without their ending: anything longer is too_long for the decoder too


class LineAssembler:
    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self._limit = limit
        self._partial = b""
        self._discarding = False

    def feed(self, data: bytes) -> tuple[list[bytes], int]:
        """Returns the lines completed by data (without their endings, never empty) and how many over-long lines
        were dropped."""
        # bytes.splitlines() breaks at exactly \r, \n and \r\n, in C: the per-line work stays out of Python.
        lines = data.splitlines()
        if not lines:
            return lines, 0
        rest = b"" if data[-1] in b"\r\n" else lines.pop()  # the last piece, unless data ended a line
        dropped = 0
        if lines:  # lines[0] ends the partial line from before
            if self._discarding:
                self._discarding = False
                lines[0] = b""
            elif self._partial:
                lines[0] = self._partial + lines[0]
                self._partial = b""
            if max(map(len, lines)) > self._limit:  # rare: one C pass decides
                kept = [line for line in lines if len(line) <= self._limit]
                dropped = len(lines) - len(kept)
                lines = kept
            if not all(lines):  # "\n\n", "\n\r", a CRLF split across reads: endings, not lines
                lines = [line for line in lines if line]
        if rest and not self._discarding:
            if len(self._partial) + len(rest) > self._limit:
                self._partial = b""
                self._discarding = True
                dropped += 1
            else:
                self._partial += rest
        return lines, dropped

    def reset(self) -> int:
        """Forgets a partial line, e.g. after the port was reopened; returns how many were thrown away (0 or 1).
        An over-long line being discarded was already counted by feed()."""
        lost = 1 if self._partial else 0
        self._partial = b""
        self._discarding = False
        return lost
