"""Operator logs: one line per event, key=value fields, repeated events rate-limited."""

from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger("telemetry_gateway")


def setup_logging(level: str) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s level=%(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # The driver logs tracebacks for every failed (re)connect; the gateway logs those states itself, one line each.
    logging.getLogger("cassandra").setLevel(logging.CRITICAL)


def _field(value: object) -> str:
    text = str(value)
    return repr(text) if (not text or any(c in text for c in ' ="\'')) else text


def event(level: int, name: str, **fields: object) -> None:
    log.log(level, " ".join([f"event={name}"] + [f"{k}={_field(v)}" for k, v in fields.items()]))


class RateLimitedLog:
    """At most one line per key per interval; the next line that gets through says how many were held back."""

    def __init__(self, interval_s: float = 10.0) -> None:
        self._interval = interval_s
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def event(self, level: int, name: str, key: str = "", **fields: object) -> None:
        slot = f"{name}/{key}"
        now = time.monotonic()
        with self._lock:
            if now - self._last.get(slot, -1e9) < self._interval:
                self._held[slot] = self._held.get(slot, 0) + 1
                return
            self._last[slot] = now
            held = self._held.pop(slot, 0)
        if held:
            fields["suppressed"] = held
        event(level, name, **fields)
