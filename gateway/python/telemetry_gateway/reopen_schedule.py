"""When a serial port is tried again (gateway/contract/serial.md; vectors:
gateway/contract/vectors/serial_reopen.jsonl). Pure: each attempt's outcome in, the wait before the next out."""

from __future__ import annotations

from typing import Callable


class ReopenSchedule:
    """A missing path is watched at a fixed period; a path that does not open backs off on the one retry schedule,
    counting failed opens since the port last opened; a port that opened and was then lost is tried at once."""

    def __init__(self, backoff: Callable[[int], float], watch_s: float) -> None:
        self._backoff = backoff  # seconds to wait after the n-th failure in a row (backoff.py)
        self._watch_s = watch_s
        self._failures = 0

    def wait_s(self, outcome: str) -> float:
        """Seconds until the next attempt after one whose outcome was "absent" (the path does not exist), "fails"
        (it exists but does not open) or "opens" (it opened; the next attempt follows its loss at once)."""
        if outcome == "absent":
            return self._watch_s
        if outcome == "opens":
            self._failures = 0
            return 0.0
        if outcome != "fails":
            raise ValueError(f"not an outcome: {outcome!r}")
        self._failures += 1
        return self._backoff(self._failures)
