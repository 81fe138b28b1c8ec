"""The metrics contract (gateway/contract/metrics.json) against a running gateway (GATEWAY_COMMAND): its /metrics
exposes exactly the declared families, with their types, help texts and labels, and only allowed label values.

A labelled series appears only once it was used, so the test feeds lines that use them (good frames of both
formats, a duplicate, a seq gap, a board restart, a seq conflict, an implausible t, a status line, bad lines;
Cassandra unreachable); every family's # HELP and # TYPE lines are there regardless. write_errors{error} needs a
Cassandra that refuses writes: its values are checked by gateway/python/tests/test_write_error_kinds.py."""

from __future__ import annotations

import json
import re
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from telemetry_conformance import ROOT, Board, GatewayUnderTest, Stream, wait_for
from telemetry_board_sim import encode_frame

CONTRACT = {family["name"]: family
            for family in json.loads((ROOT / "gateway" / "contract" / "metrics.json").read_text())["metrics"]}
HISTOGRAM_SAMPLES = ("_bucket", "_count", "_sum")
# Families whose series the lines below make appear (the rest are checked through their HELP/TYPE lines).
FED = ("lines_read_total", "status_lines_total", "frames_accepted_total", "rejects_total", "duplicates_total",
       "seq_missing_frames_total", "board_restarts_total", "seq_conflicts_total", "explicit_time_refused_total",
       "input_up", "build_info", "source_last_seen_seconds")


def exposition(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return response.read().decode()


def declared_lines(text: str, kind: str) -> dict[str, str]:
    """{family name: text} of the exposition's `# HELP` or `# TYPE` lines."""
    found = {}
    for name, rest in re.findall(rf"^# {kind} (\S+) (.*)$", text, re.MULTILINE):
        assert name not in found, f"{kind} line twice for {name}"
        found[name] = rest.replace("\\n", "\n").replace("\\\\", "\\") if kind == "HELP" else rest
    return found


def family_of(sample_name: str) -> dict | None:
    if sample_name in CONTRACT and CONTRACT[sample_name]["type"] != "histogram":
        return CONTRACT[sample_name]
    for suffix in HISTOGRAM_SAMPLES:
        family = CONTRACT.get(sample_name.removesuffix(suffix))
        if sample_name.endswith(suffix) and family and family["type"] == "histogram":
            return family
    return None


def fed_lines() -> list[bytes]:
    """Lines that use every labelled family of FED but input_up (an open port does)."""
    m, now_ms = Stream("M"), int(time.time() * 1000)
    first, second, third = m.frame(1, temp=1.5), m.frame(2, temp=2.5), m.frame(3, temp=3.5)
    m.frame(4), m.frame(5)  # never sent: a gap of two
    corrupt = bytearray(m.frame(6, temp=6.5))
    corrupt[-4:-1] = b"000" if corrupt[-4:-1] != b"000" else b"111"
    return [
        first, second, second,  # a duplicate
        third, m.frame(7, temp=7.5),  # seq 3 then 6: two missing
        encode_frame("M", 2, [("n", 8), ("temp", 8.5)]),  # frame 3's seq, other content: a conflict
        encode_frame("M", 0, [("n", 9)]),  # back to 0: the board restarted
        encode_frame("M", 1, [("n", 10)], t=now_ms + 10 * 86_400_000),  # ten days ahead: stamped on receipt
        b'{"source": "L", "destination": "C", "temperaturein": 11.77, "light": 57, "action": "N"}\n',
        b"# base station ready, radio ok\n",
        bytes(corrupt), b"hello\n", b"$" + b"x" * 400 + b"\n",
    ]


def unseen(gateway: GatewayUnderTest) -> list[str]:
    names = {name for name, _labels in gateway.metrics_or_none()}
    return [fed for fed in FED if "telemetry_gateway_" + fed not in names]


def test_metrics_are_exactly_the_contracts(tmp_path):
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], "unused", "127.0.0.1")
    gateway.start(TELEMETRY_CASSANDRA_PORT="1")  # unreachable: everything stays spooled
    try:
        board.write(b"".join(fed_lines()))
        wait_for(lambda: not unseen(gateway), 30, "a series of every fed family")
        text = exposition(gateway.metrics_port)
    finally:
        gateway.stop()

    types, helps = declared_lines(text, "TYPE"), declared_lines(text, "HELP")
    assert types.keys() - CONTRACT.keys() == set(), "families exposed but not in metrics.json"
    assert CONTRACT.keys() - types.keys() == set(), "families of metrics.json not exposed"
    assert {name: family["type"] for name, family in CONTRACT.items()} == types
    assert {name: family["help"] for name, family in CONTRACT.items()} == helps

    seen_labels: dict[str, set[str]] = {}
    for parsed in text_string_to_metric_families(text):
        for sample in parsed.samples:
            family = family_of(sample.name)
            assert family is not None, f"sample {sample.name} belongs to no family of metrics.json"
            labels = dict(sample.labels)
            if sample.name.endswith("_bucket"):
                assert float(labels.pop("le")) in [*family["buckets"], float("inf")], sample
            assert labels.keys() == family["labels"].keys(), sample
            for label, value in labels.items():
                allowed = family["labels"][label]
                assert value in allowed if isinstance(allowed, list) else value != "", sample
                seen_labels.setdefault(f"{family['name']}{{{label}}}", set()).add(value)
    print("label values seen:", seen_labels)
    assert seen_labels["telemetry_gateway_frames_accepted_total{format}"] == {"v1", "legacy"}
    assert seen_labels["telemetry_gateway_rejects_total{reason}"] == {"bad_crc", "no_frame", "too_long"}
    assert seen_labels["telemetry_gateway_lines_read_total{input}"] == {str(board.link)}
