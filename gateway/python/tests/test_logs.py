"""Operator log lines: bytes from a serial line never reach the log raw; rate-limited keys stay bounded."""

import ast
import logging
import queue

from telemetry_gateway import logs
from telemetry_gateway.inputs import LineHandler
from telemetry_gateway.logs import RateLimitedLog, _field
from telemetry_gateway.metrics import Metrics


def test_plain_values_stay_plain():
    assert _field("bad_crc") == "bad_crc"
    assert _field(42) == "42"
    assert _field("/dev/ttyUSB0") == "/dev/ttyUSB0"


def test_spaces_quotes_and_empty_values_are_quoted():
    assert _field("two words") == "'two words'"
    assert _field("a=b") == "'a=b'"
    assert _field("") == "''"


def test_control_and_non_ascii_characters_are_escaped():
    nasty = "\x1b[2J\x00\r\n\x7f\x9b\xff\u2028é"  # ESC (clear screen), NUL, CR, LF, DEL, C1 CSI, 0xff, LS, é
    rendered = _field(nasty)
    assert rendered.isascii() and rendered.isprintable()
    assert "\\x1b" in rendered and "\\x00" in rendered and "\\r" in rendered and "\\x7f" in rendered
    assert "\\x9b" in rendered and "\\xff" in rendered
    assert ast.literal_eval(rendered) == nasty  # nothing lost: the escape is exact


def test_a_rejected_lines_excerpt_reaches_the_log_escaped(caplog):
    line = b"\x1b]0;pwned\x07$T1,G,1,a=1*\xff\xfe\x00"  # an xterm title sequence, bytes >= 0x80, NUL
    with caplog.at_level(logging.WARNING, logger="telemetry_gateway"):
        LineHandler("/dev/ttyUSB0", queue.Queue(), Metrics())._reject("bad_syntax", 1, line)
    text = caplog.records[-1].getMessage()
    assert text.isascii() and text.isprintable()
    assert text.endswith(r"line='\x1b]0;pwned\x07$T1,G,1,a=1*\xff\xfe\x00'")  # each byte escaped once


def test_rate_limited_log_keys_are_bounded(caplog, monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(logs.time, "monotonic", lambda: now[0])
    limited = RateLimitedLog(interval_s=10, max_slots=100)
    with caplog.at_level(logging.INFO, logger="telemetry_gateway"):
        for i in range(5000):  # junk sources, each with its own key, all within one interval
            limited.event(logging.INFO, "seq_gap", key=f"junk{i}", source=f"junk{i}")
        assert len(limited._last) <= 101  # the bound, plus the shared slot for the rest
        assert len(caplog.records) == 101  # one line each for the first 100 keys, one for all the others
        now[0] += 11  # every slot's interval is over: the table is cleared for new keys
        limited.event(logging.INFO, "seq_gap", key="G", source="G")
        assert len(limited._last) == 1
    assert caplog.records[-1].getMessage() == "event=seq_gap source=G"
