"""Gateway conformance (gateway/contract/alerts.md): a simulated frost night gives exactly one raise and one clear per
[[alerts]] rule, in the log, in alerts_firing, through each rule's command and in /status.json. The frost rule's
command is the ready notifier, deploy/notify/telemetry-alert-webhook, posting JSON to a local HTTP server (the kit's
web_hook); the others run a script that appends the alert's environment to a file. The night is ten hours of
readings every ten minutes, compressed: each frame carries its own t, and for_s is measured on reading time. A
silence rule then raises once the board goes quiet and clears with its next frame. Every gateway under test runs
side by side, each with its board and source; Cassandra plays no part (the gateways point at a closed port)."""

from __future__ import annotations

import json
import shlex
import sys
import time
import urllib.request
from pathlib import Path

from telemetry_conformance import Board, GatewayUnderTest, Stream, gateways_under_test, toml_value, wait_for
from telemetry_conformance.scenario_fixtures import gateways  # noqa: F401 (fixture)
from telemetry_conformance.web_hook import web_hook  # noqa: F401 (fixture)

EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test in each test, side by side
NOTIFIER = Path(__file__).resolve().parents[2] / "deploy" / "notify" / "telemetry-alert-webhook"
STEP_MS = 600_000
# temp_in every ten minutes from dusk: a 10-minute dip below 2 (pending, never raised), 30 minutes below 2 (frost
# raised at the fourth cold reading), values wavering between 2 and 3 while it fires (no clear), then 3.0 (cleared).
NIGHT = [8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 1.9, 2.5, 2.2, 1.5, 1.0, 0.5, 0.0, 2.1, 1.0, -1.0, -2.0, 2.8, 1.5, 2.5, 3.0,
         4.0, 5.0, 5.5, 6.0, 7.0, 8.0]
RECORD = """import os, sys
keys = ("ALERT_RULE", "ALERT_STATE", "ALERT_KIND", "ALERT_METRIC", "ALERT_VALUE", "ALERT_THRESHOLD", "ALERT_AT")
with open(os.path.join(sys.argv[1], os.environ["ALERT_SOURCE"] + ".log"), "a") as out:
    out.write(" ".join(os.environ[key] or "-" for key in keys) + "\\n")
"""


def frost(record: list[str], for_s: float = 1800.0) -> str:
    """The frost rule (below 2, cleared at 3, after for_s: 30 minutes), its command the argv `record`."""
    return f"""
[[alerts]]
name = "frost"
metric = "temp_in"
below = 2.0
clear_at = 3.0
for_s = {float(for_s)!r}
command = {toml_value(record)}
"""


def utc(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def rules(record: list[str], notify: list[str]) -> str:
    command = toml_value(record)
    return frost(notify) + f"""
[[alerts]]
name = "cold"
metric = "temp_in"
below = 5.0
clear_at = 6.0
command = {command}

[[alerts]]
name = "quiet"
silent_s = 1.0
command = {command}
"""


def test_a_frost_night_raises_and_clears_each_rule_once(tmp_path, gateways, monkeypatch, web_hook):  # noqa: F811
    script = tmp_path / "record.py"
    script.write_text(RECORD)
    out = tmp_path / "alerts"
    out.mkdir()
    dusk = int(time.time() * 1000) - len(NIGHT) * STEP_MS
    rigs = {}
    for name, command in gateways_under_test().items():
        folder = tmp_path / name
        folder.mkdir()
        board = Board(folder / "ttyUSB0")
        gateway = GatewayUnderTest.configure(folder, [board.link], "telemetry", "127.0.0.1",
                                             extra=rules([sys.executable, str(script), str(out)],
                                                         [str(NOTIFIER), f"{web_hook.url}/{name}"]))
        gateways.append(gateway)
        monkeypatch.setenv("GATEWAY_COMMAND", shlex.join(command))
        gateway.start(TELEMETRY_CASSANDRA_PORT="1")  # nothing listens: the frames wait in the spool
        rigs[name] = (board, gateway, Stream(f"night-{name}"))
    for board, _, stream in rigs.values():
        board.write(b"".join(stream.frame(i, t=dusk + i * STEP_MS, temp_in=temp) for i, temp in enumerate(NIGHT)))
    for name, (_, gateway, stream) in rigs.items():
        wait_for(lambda: gateway.metric("telemetry_gateway_alerts_firing", rule="quiet", source=stream.source) == 1,
                 15, f"{name}: quiet raised")
    for board, _, stream in rigs.values():
        board.write(stream.frame(len(NIGHT), temp_in=9.0))  # the board speaks again, on receipt time

    at = [dusk + i * STEP_MS for i in range(len(NIGHT))]
    for name, (_, gateway, stream) in rigs.items():
        record = out / f"{stream.source}.log"
        wait_for(lambda: record.exists() and len(record.read_text().splitlines()) == 4, 15, f"{name}: four runs")
        runs = record.read_text().splitlines()
        by_rule = {rule: [run.split(" ")[1:] for run in runs if run.split(" ")[0] == rule]
                   for rule in ("frost", "cold", "quiet")}
        assert by_rule["frost"] == [], name
        posted = lambda: [request.json() for request in web_hook.posted(f"/{name}")]  # noqa: E731
        wait_for(lambda: len(posted()) == 2, 15, f"{name}: frost raised and cleared, posted")
        board_id = stream.source
        assert posted() == [
            {"rule": "frost", "source": board_id, "state": "firing", "kind": "below", "metric": "temp_in", "value": 0,
             "threshold": 2, "at": at[12], "time": utc(at[12]),
             "message": f"frost: {board_id} temp_in 0, below 2, {utc(at[12])}"},
            {"rule": "frost", "source": board_id, "state": "ok", "kind": "below", "metric": "temp_in", "value": 3,
             "threshold": 3, "at": at[20], "time": utc(at[20]),
             "message": f"frost cleared: {board_id} temp_in 3 (clears at 3), {utc(at[20])}"}], name
        assert by_rule["cold"] == [["firing", "below", "temp_in", "4", "5", str(at[4])],
                                   ["ok", "below", "temp_in", "6", "6", str(at[24])]], name
        assert [run[:3] + [run[4]] for run in by_rule["quiet"]] == [["firing", "silence", "-", "1"],
                                                                    ["ok", "silence", "-", "1"]], name
        assert all(float(run[3]) > 1 for run in by_rule["quiet"]), name
        log = gateway.log()
        for rule in ("frost", "cold", "quiet"):
            for transition in ("alert_raised", "alert_cleared"):
                assert log.count(f"event={transition} rule={rule} source={stream.source} ") == 1, (name, rule)
            assert gateway.metric("telemetry_gateway_alerts_firing", rule=rule, source=stream.source) == 0, name
        assert "event=alert_command_failed" not in log, name
        with urllib.request.urlopen(f"http://127.0.0.1:{gateway.metrics_port}/status.json", timeout=5) as response:
            status = json.load(response)
        [source] = [item for item in status["sources"] if item["source"] == stream.source]
        assert [(item["rule"], item["state"]) for item in source["alerts"]] == [
            ("cold", "ok"), ("frost", "ok"), ("quiet", "ok")], name  # status.md, sorted by rule
        assert all(item["since"] for item in source["alerts"]), name  # each left ok once and came back
        assert gateway.stop() == 0, name
    assert sorted(path.name for path in out.iterdir()) == sorted(f"{s.source}.log" for *_, s in rigs.values())
    assert sorted(request.path for request in web_hook.requests) == sorted(f"/{name}" for name in rigs
                                                                      for _ in range(2))
