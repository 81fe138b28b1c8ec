"""Operator logs: one line per event, key=value fields, repeated events rate-limited."""

from __future__ import annotations

import logging
import threading
import time

from .contract_constants import contract_number, contract_seconds
from .rate_limit import RateLimit
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


MAX_SLOTS = contract_number("log_keys_max")  # keys (often source names) remembered per event
INTERVAL_S = contract_seconds("log_interval_ms")
LONG_INTERVAL_S = contract_seconds("log_interval_long_ms")  # the events logs.md marks 60 s
# What a log line shows of a long value (logs.md, "Events").
LINE_SHOWN_BYTES = contract_number("log_line_shown_bytes")
ERROR_CHARS = contract_number("log_error_chars")
DETAIL_CHARS = contract_number("log_detail_chars")


class RateLimitedLog:
    """At most one line per (event, key) per interval; the next line that gets through says how many were held back
    (rate_limit.py: the rule, logs.md "Rate limiting"). Keys can come from the input (source names): at most
    max_slots are remembered per event, the others share the event's key `*`."""

    def __init__(self, interval_s: float = INTERVAL_S, max_slots: int = MAX_SLOTS) -> None:
        self._limit = RateLimit(interval_s, max_slots)
        self._lock = threading.Lock()

    def event(self, level: int, name: str, key: str = "", **fields: object) -> None:
        with self._lock:
            held = self._limit.admit(time.monotonic(), name, key)
        if held is None:
            return
        if held:
            fields["suppressed"] = held
        event(level, name, **fields)
