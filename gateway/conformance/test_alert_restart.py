"""Gateway conformance (gateway/contract/alerts.md, "Order, bounds, restart"): alert states live in memory only, so
an alert that still holds across a restart is raised again, once, by the reading that holds the condition for
for_s again, and cleared once afterwards; no clear in between. Each frame carries its own t (readings ten minutes
apart). Every gateway under test runs side by side, each with its board and source; Cassandra plays no part (the
gateways point at a closed port)."""

from __future__ import annotations

import shlex
import sys
import time

from telemetry_conformance import Board, GatewayUnderTest, Stream, gateways_under_test, wait_for
from telemetry_conformance.scenario_fixtures import gateways  # noqa: F401 (fixture)
from test_frost_night_alerts import RECORD, STEP_MS, frost

EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test in each test, side by side
# Cold from the second reading: raised at the fifth (for_s after the first cold one). After the restart the pair
# starts ok: pending from the first reading, raised again at the fourth, then 3.5 clears it.
BEFORE = [5.0, 1.5, 1.0, 0.5, 0.0]
AFTER = [1.0, 0.5, 0.0, -0.5, 1.0]
CLEAR = 3.5


def test_an_alert_that_holds_across_a_restart_is_raised_again_once(tmp_path, gateways, monkeypatch):  # noqa: F811
    script = tmp_path / "record.py"
    script.write_text(RECORD)
    out = tmp_path / "alerts"
    out.mkdir()
    readings = [*BEFORE, *AFTER, CLEAR]
    dusk = int(time.time() * 1000) - len(readings) * STEP_MS
    at = [dusk + i * STEP_MS for i in range(len(readings))]
    rigs = {}
    for name, command in gateways_under_test().items():
        folder = tmp_path / name
        folder.mkdir()
        gateway = GatewayUnderTest.configure(folder, [(board := Board(folder / "ttyUSB0")).link], "telemetry",
                                             "127.0.0.1", extra=frost([sys.executable, str(script), str(out)]))
        gateways.append(gateway)
        rigs[name] = (board, gateway, Stream(f"restart-{name}"), shlex.join(command))

    def start_all():
        for _, gateway, _, command in rigs.values():
            monkeypatch.setenv("GATEWAY_COMMAND", command)
            gateway.start(TELEMETRY_CASSANDRA_PORT="1")  # nothing listens: the frames wait in the spool

    def send(first: int, values: list[float]):
        for board, _, stream, _ in rigs.values():
            board.write(b"".join(stream.frame(first + i, t=at[first + i], temp_in=value)
                                 for i, value in enumerate(values)))

    def runs(stream: Stream, count: int, name: str) -> list[list[str]]:
        record = out / f"{stream.source}.log"
        wait_for(lambda: record.exists() and len(record.read_text().splitlines()) >= count, 10, f"{name}: {count} runs")
        return [run.split(" ") for run in record.read_text().splitlines()]

    raised = ["frost", "firing", "below", "temp_in"]
    start_all()
    send(0, BEFORE)
    for name, (_, gateway, stream, _) in rigs.items():
        assert runs(stream, 1, name) == [[*raised, "0", "2", str(at[4])]], name
        assert gateway.metric("telemetry_gateway_alerts_firing", rule="frost", source=stream.source) == 1, name
        assert gateway.stop() == 0, name

    start_all()
    send(len(BEFORE), AFTER)
    for name, (_, gateway, stream, _) in rigs.items():
        assert runs(stream, 2, name) == [[*raised, "0", "2", str(at[4])], [*raised, "-0.5", "2", str(at[8])]], name
        log = gateway.log()
        assert log.count(f"event=alert_raised rule=frost source={stream.source} ") == 2, name
        assert f"event=alert_cleared rule=frost source={stream.source} " not in log, name
        assert gateway.metric("telemetry_gateway_alerts_firing", rule="frost", source=stream.source) == 1, name

    send(len(readings) - 1, [CLEAR])
    for name, (_, gateway, stream, _) in rigs.items():
        assert runs(stream, 3, name)[2] == ["frost", "ok", "below", "temp_in", "3.5", "3", str(at[-1])], name
        log = gateway.log()
        assert log.count(f"event=alert_raised rule=frost source={stream.source} ") == 2, name
        assert log.count(f"event=alert_cleared rule=frost source={stream.source} ") == 1, name
        assert "event=alert_command_failed" not in log, name
        assert gateway.metric("telemetry_gateway_alerts_firing", rule="frost", source=stream.source) == 0, name
        assert len(runs(stream, 3, name)) == 3, name
        assert gateway.stop() == 0, name
