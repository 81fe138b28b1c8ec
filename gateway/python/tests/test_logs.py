"""Operator log lines: bytes from a serial line never reach the log raw; rate-limited keys stay bounded."""

import json
import logging
import queue
import re
from pathlib import Path

import pytest

from telemetry_gateway import logs
from telemetry_gateway.line_handler import LineHandler
from telemetry_gateway.logs import LineFormatter, RateLimitedLog, message
from telemetry_gateway.metrics import Metrics
from telemetry_gateway.rate_limit import RateLimit
from telemetry_gateway.text_forms import field_text


CONTRACT_VECTORS = Path(__file__).resolve().parents[2] / "contract" / "vectors"
FIELD_CASES = [json.loads(line) for line in (CONTRACT_VECTORS / "log_fields.jsonl").read_text("ascii").splitlines()]


@pytest.mark.parametrize("case", FIELD_CASES, ids=lambda c: c["name"])
def test_log_field_vectors(case):
    """log_fields.jsonl: a field's value → its text (null: the field is left out)."""
    assert field_text(case["value"]) == case["expect"]
    line = message("e", {"k": case["value"]})
    assert line == ("event=e" if case["expect"] is None else f"event=e k={case['expect']}")


def test_every_event_this_gateway_logs_is_in_the_contract():
    """logs.md's table names every event: each `event(...)`/`.event(...)` call's name in the package is there."""
    table = set(re.findall(r"^\| `([a-z0-9_]+)` \|", (CONTRACT_VECTORS.parent / "logs.md").read_text("utf-8"), re.M))
    package = Path(logs.__file__).parent
    calls = re.compile(r'\bevent\(\s*[^,]+,\s*"([a-z0-9_]+)"')
    logged = {name for path in package.rglob("*.py") for name in calls.findall(path.read_text("utf-8"))}
    assert len(logged) > 20 and logged <= table, logged - table


def test_a_line_has_utc_time_with_milliseconds_and_the_level():
    record = logging.LogRecord("telemetry_gateway", logging.WARNING, "", 0, "event=e", None, None)
    record.created = 1700000000.123456
    assert LineFormatter().format(record) == "2023-11-14T22:13:20.123Z level=WARNING event=e"


def test_a_rejected_lines_excerpt_reaches_the_log_escaped(caplog):
    line = b"\x1b]0;pwned\x07$T1,G,1,a=1*\xff\xfe\x00"  # an xterm title sequence, bytes >= 0x80, NUL
    with caplog.at_level(logging.WARNING, logger="telemetry_gateway"):
        LineHandler("/dev/ttyUSB0", queue.Queue(), Metrics())._reject("bad_syntax", 1, line)
    text = caplog.records[-1].getMessage()
    assert text.isascii() and text.isprintable()
    assert text.endswith(r'line="\u001b]0;pwned\u0007$T1,G,1,a=1*\u00ff\u00fe\u0000"')  # each byte escaped once


def test_rate_limited_log_keys_are_bounded(caplog, monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(logs.time, "monotonic", lambda: now[0])
    limited = RateLimitedLog(interval_s=10, max_slots=100)
    with caplog.at_level(logging.INFO, logger="telemetry_gateway"):
        for i in range(5000):  # junk sources, each with its own key, all within one interval
            limited.event(logging.INFO, "seq_gap", key=f"junk{i}", source=f"junk{i}")
        assert limited._limit.remembered("seq_gap") == 100  # the bound; the shared key `*` for the rest
        assert len(caplog.records) == 101  # one line each for the first 100 keys, one for all the others
        now[0] += 11  # every key's interval is over: a new key takes the oldest one's place
        limited.event(logging.INFO, "seq_gap", key="G", source="G")
        assert limited._limit.remembered("seq_gap") == 100
    assert caplog.records[-1].getMessage() == "event=seq_gap source=G"


RATE_CASES = [json.loads(line) for line in (CONTRACT_VECTORS / "log_rate_limit.jsonl").read_text("ascii").splitlines()]


@pytest.mark.parametrize("case", RATE_CASES, ids=lambda c: c["name"])
def test_rate_limit_vectors(case):
    """log_rate_limit.jsonl: (time, event, key) in → written (with suppressed=N) or held back."""
    limit = RateLimit(case["params"]["interval_ms"], case["params"]["max_keys"])
    for step in case["steps"]:
        held = limit.admit(step["at_ms"], step["event"], step["key"])
        got = {"written": False} if held is None else {"written": True, "suppressed": held}
        assert got == step["expect"], step
