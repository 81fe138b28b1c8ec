"""Operator logs: one line per event, key=value fields, repeated events rate-limited."""

from __future__ import annotations

import logging
import threading
import time

from .text_forms import field_text
from .timestamps import iso_ms

log = logging.getLogger("telemetry_gateway")


class LineFormatter(logging.Formatter):
    """`<ISO 8601 UTC time with ms>Z level=<LEVEL> <message>` (gateway/contract/logs.md, "A line")."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s level=%(levelname)s %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return iso_ms(int(record.created * 1000))


def setup_logging(level: str) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(LineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # The driver logs tracebacks for every failed (re)connect; the gateway logs those states itself, one line each.
    logging.getLogger("cassandra").setLevel(logging.CRITICAL)


def message(name: str, fields: dict[str, object]) -> str:
    """`event=<name> k=v ...`: fields in order, absent ones left out, values quoted where they need it."""
    texts = ((key, field_text(value)) for key, value in fields.items())
    return " ".join([f"event={name}"] + [f"{key}={text}" for key, text in texts if text is not None])


def event(level: int, name: str, **fields: object) -> None:
    log.log(level, message(name, fields))


MAX_SLOTS = 2048  # keys (often source names) remembered by one RateLimitedLog


class RateLimitedLog:
    """At most one line per key per interval; the next line that gets through says how many were held back.

    Keys can come from the input (source names), so their number is bounded: at MAX_SLOTS the slots past their
    interval are forgotten, and while every slot is still live, new keys share one slot per event name."""

    def __init__(self, interval_s: float = 10.0, max_slots: int = MAX_SLOTS) -> None:
        self._interval = interval_s
        self._max_slots = max_slots
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}
        self._prune_after = 0.0  # a full table is scanned at most every quarter interval

    def event(self, level: int, name: str, key: str = "", **fields: object) -> None:
        slot = f"{name}/{key}"
        now = time.monotonic()
        with self._lock:
            if slot not in self._last and len(self._last) >= self._max_slots:
                if now >= self._prune_after:
                    self._forget_expired(now)
                if len(self._last) >= self._max_slots:
                    slot = f"{name}/*"
            if now - self._last.get(slot, -1e9) < self._interval:
                self._held[slot] = self._held.get(slot, 0) + 1
                return
            self._last[slot] = now
            held = self._held.pop(slot, 0)
        if held:
            fields["suppressed"] = held
        event(level, name, **fields)

    def _forget_expired(self, now: float) -> None:
        """Slots whose interval is over say nothing any more but how many lines they held back: dropped."""
        self._last = {slot: last for slot, last in self._last.items() if now - last < self._interval}
        self._held = {slot: held for slot, held in self._held.items() if slot in self._last}
        self._prune_after = now + self._interval / 4
