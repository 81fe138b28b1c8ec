"""The status page's pure parts (status_tally.py against gateway/contract/vectors/status_tally.jsonl,
status_document.py against status.schema.json's rules), its routes (status_server.py, on a real socket) and
--version. The page itself, in a real browser against a running gateway: gateway/conformance/test_status_page.py."""

import base64
import hashlib
import http.client
import json
import time
from pathlib import Path

import jsonschema
import pytest

from telemetry_gateway.cli import main
from telemetry_gateway.metrics import Metrics
from telemetry_gateway.reading_values import pack_values
from telemetry_gateway.status_document import GatewayFacts, Moment, status_document
from telemetry_gateway.timestamps import iso_ms
from telemetry_gateway.status_page import PAGE, UNITS, StatusPage
from telemetry_gateway.http_rules import page_csp
from telemetry_gateway.status_server import start_status_server
from telemetry_gateway.status_tally import SourceTally, is_stale
from telemetry_gateway.version import VERSION

CONTRACT = Path(__file__).resolve().parents[2] / "contract"
TALLY_CASES = [json.loads(line) for line in (CONTRACT / "vectors" / "status_tally.jsonl").read_text("ascii")
               .splitlines()]


@pytest.mark.parametrize("case", TALLY_CASES, ids=[case["name"] for case in TALLY_CASES])
def test_status_tally_vectors(case):
    tally = SourceTally()
    for step in case["steps"]:
        if "frame" in step:
            f = step["frame"]
            tally.frame(f["source"], f["received_ms"], f["ts_ms"], tuple(map(tuple, f["values"])))
        elif "duplicate" in step:
            tally.duplicate(step["duplicate"])
        elif "gap" in step:
            tally.gap(step["gap"]["source"], step["gap"]["missing"])
        elif "forget" in step:
            tally.forget(step["forget"])
        elif "reject" in step:
            tally.reject(step["reject"]["source"], step["reject"]["reason"], step["reject"]["keyed"],
                         step["reject"]["received_ms"])
        else:
            now = step["view"]
            got = [{"source": v.source, "last_received_ms": v.last_received_ms, "values_ts_ms": v.values_ts_ms,
                    "values": [list(pair) for pair in v.values], "frames_per_minute": v.frames_per_minute,
                    "seq_gaps": v.seq_gaps, "duplicates": v.duplicates,
                    "stale": is_stale(v.last_received_ms, now, case["params"]["stale_after_ms"]),
                    "rejects": v.rejects, "refused_burst": v.refused_burst}
                   for v in tally.view(now)]
            assert got == step["expect"], f"view at {now}"


FACTS = GatewayFacts("1.2.3", "python", "batch", 1_000_000, 60.0)


def document(tally: SourceTally, now_ms: int, alerts=None, **moment) -> dict:
    fields = {"rejects": {}, "spool_frames": 0, "held_frames": 0, "oldest_unsent_ms": None, "cassandra_up": True,
              "last_error": None, **moment}
    return status_document(FACTS, Moment(now_ms, **fields), tally.view(now_ms), alerts or {}, UNITS,
                           tally.series.view(now_ms))


def test_document_fields_units_and_alert_seam():
    tally = SourceTally()
    tally.frame("greenhouse", 1_001_000, 1_000_500, (("temp_in", 4.25), ("odd", 1.0)))
    tally.reject("greenhouse", "bad_mac", False, 1_000_500)
    tally.series.frame("greenhouse", 1_001_000, (("temp_in", 4.25), ("odd", 1.0)))
    alerts = {"greenhouse": [{"rule": "z", "state": "ok", "since": None},
                             {"rule": "frost", "state": "firing", "since": iso_ms(1_050_000)}],
              "cellar": [{"rule": "silent", "state": "firing", "since": iso_ms(1_000_000)}]}
    doc = document(tally, 1_061_000, alerts, rejects={"bad_crc": 2, "too_long": 0}, spool_frames=7, held_frames=1,
                   oldest_unsent_ms=1_031_000, cassandra_up=False, last_error=("timeout", 1_060_000))
    jsonschema.validate(doc, json.loads((CONTRACT / "status.schema.json").read_text()))
    assert doc["gateway"] == {"version": "1.2.3", "implementation": "python", "policy": "batch",
                              "started": "1970-01-01T00:16:40.000Z", "uptime_s": 61.0}
    cellar, greenhouse = doc["sources"]
    assert cellar == {"source": "cellar", "last_frame": None, "age_s": None, "stale": True, "values_at": None,
                      "values": [], "frames_per_minute": 0.0, "seq_gaps": 0, "duplicates": 0,
                      "rejects": {}, "refused_burst": False, "alerts": alerts["cellar"], "series": []}
    assert greenhouse["values"] == [{"metric": "temp_in", "value": 4.25, "unit": "\u00b0C"},
                                    {"metric": "odd", "value": 1.0, "unit": None}]
    assert (greenhouse["age_s"], greenhouse["stale"], greenhouse["rejects"]) == (60.0, False, {"bad_mac": 1})
    assert [a["rule"] for a in greenhouse["alerts"]] == ["frost", "z"]
    assert greenhouse["series"] == [{"metric": "odd", "points": [["1970-01-01T00:15:00.000Z", 1.0, 1.0, 1.0]]},
                                    {"metric": "temp_in", "points": [["1970-01-01T00:15:00.000Z", 4.25, 4.25, 4.25]]}]
    assert doc["rejects"] == {"bad_crc": 2}
    assert doc["spool"] == {"frames": 7, "held_frames": 1, "oldest_unsent_age_s": 30.0}
    assert doc["cassandra"] == {"state": "down", "last_error": {"kind": "timeout", "at": "1970-01-01T00:17:40.000Z"}}


class FakeSpool:
    depth, held_frames = 3, 0

    def oldest_received_ms(self):
        return None


def call(port, method, path, host="127.0.0.1"):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.putrequest(method, path, skip_host=True)
    connection.putheader("Host", host)
    connection.endheaders()
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), body


@pytest.fixture
def served():
    metrics = Metrics()
    tally = SourceTally()
    tally.frame("A", 5000, 5000, pack_values((("temp", 3.125),)))  # as the frame acceptor keeps them
    metrics.rejects.labels("bad_crc").inc(4)
    page = StatusPage(FACTS, tally, FakeSpool(), lambda: None, metrics,
                      alert_states=lambda: {"A": [{"rule": "r", "state": "pending", "since": None}]})
    server = start_status_server("127.0.0.1:0", metrics.registry, page, ["pi.lan"])
    yield server.server_address[1], page
    server.shutdown()
    server.server_close()


def test_routes_serve_the_page_the_json_and_the_metrics_only(served):
    port, page = served
    status, headers, body = call(port, "GET", "/")
    assert (status, headers["Content-Type"], body) == (200, "text/html; charset=utf-8", PAGE)
    assert headers["Content-Security-Policy"] == page_csp(PAGE) and headers["X-Content-Type-Options"] == "nosniff"
    status, headers, body = call(port, "GET", "/status.json?t=1", host="pi.lan:80")
    doc = json.loads(body)
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert doc["sources"][0]["values"] == [{"metric": "temp", "value": 3.125, "unit": "\u00b0C"}]
    assert doc["sources"][0]["alerts"] == [{"rule": "r", "state": "pending", "since": None}]
    assert doc["rejects"] == {"bad_crc": 4} and doc["spool"]["frames"] == 3
    assert call(port, "HEAD", "/status.json")[2] == b""
    assert b"telemetry_gateway_rejects_total" in call(port, "GET", "/metrics")[2]
    for path in ("/index.html", "/status", "/metrics/x", "//", "http://["):
        status, headers, _ = call(port, "GET", path)
        assert (status, headers["X-Content-Type-Options"]) == (404, "nosniff"), path
    assert call(port, "POST", "/")[0] == 405
    assert call(port, "GET", "/", host="attacker.example")[0] == 421
    status, headers, body = call(port, "GET", "/healthz")  # the one frame was read at 5 s after the epoch
    assert (status, headers["Content-Type"], headers["Cache-Control"]) == (503, "text/plain; charset=utf-8", "no-store")
    assert body.startswith(b"no frame from any board for ") and body.endswith(b" s\n")
    now_ms = time.time_ns() // 1_000_000
    page.tally.frame("A", now_ms, now_ms, pack_values((("temp", 3.0),)))
    assert call(port, "GET", "/healthz")[::2] == (200, b"ok\n")
    page.down_since = lambda: now_ms - 400_000
    status, _, body = call(port, "GET", "/healthz")
    assert (status, body[:26]) == (503, b"cassandra unreachable for ")
    assert call(port, "HEAD", "/healthz")[::2] == (503, b"")
    refused = {s.labels["status"] for f in page.metrics.http_refused.collect() for s in f.samples if s.value}
    assert "503" not in refused
    page.alert_states = lambda: 1 / 0
    assert call(port, "GET", "/status.json")[::2] == (500, b"/status.json failed: division by zero\n")


def test_the_page_policy_hashes_its_inline_script_and_style():
    page = b"<style>a{}</style><script>x()</script>"
    assert page_csp(page) == ("default-src 'none'; script-src 'sha256-" + b64sha(b"x()") + "'; style-src 'sha256-"
                              + b64sha(b"a{}") + "'; connect-src 'self'; img-src data:; base-uri 'none'; "
                              "form-action 'none'; frame-ancestors 'none'")


def b64sha(data):
    return base64.b64encode(hashlib.sha256(data).digest()).decode()


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"telemetry-gateway {VERSION} (python)\n"


def test_build_info_and_last_seen_gauges():
    metrics = Metrics()
    metrics.build_info.labels("1.2.3", "python", "batch").set(1)
    metrics.last_seen.read = lambda: {"A": 5_500, "B": 1_795_000_000_123}
    get = metrics.registry.get_sample_value
    assert get("telemetry_gateway_build_info", {"version": "1.2.3", "implementation": "python", "policy": "batch"}) == 1
    assert get("telemetry_gateway_source_last_seen_seconds", {"source": "A"}) == 5.5
    assert get("telemetry_gateway_source_last_seen_seconds", {"source": "B"}) == 1_795_000_000.123
