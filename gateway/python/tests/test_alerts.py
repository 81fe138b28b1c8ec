"""Alert rules (gateway/contract/alerts.md): vectors/alerts.jsonl against the pure evaluation, then the shell: log
lines, the gauge, the status seam and the commands (argv, environment, timeout, one run in flight per rule)."""

import json
import logging
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from telemetry_gateway.alert_commands import AlertCommands, command_env
from telemetry_gateway.alert_rules import parse_alert_rules
from telemetry_gateway.alert_states import AlertStates, Transition
from telemetry_gateway.alerting import Alerting
from telemetry_gateway.config import Config
from telemetry_gateway.ingest import Ingest
from telemetry_gateway.metrics import Metrics
from telemetry_gateway.spool import NewFrame, Spool

VECTORS = Path(__file__).resolve().parents[2] / "contract" / "vectors"
CASES = [json.loads(line) for line in (VECTORS / "alerts.jsonl").read_text("ascii").splitlines()]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_alert_vectors(case):
    params = case["params"]
    states = AlertStates(parse_alert_rules(case["rules"], ""), params["start_ms"], params["max_sources"],
                         params["known"])
    for number, step in enumerate(case["steps"]):
        if "tick" in step:
            got = states.tick(step["tick"])
        else:
            frame = step["frame"]
            got = states.frame(frame["source"], frame["ts"], frame["received"], frame["values"])
        assert [t._asdict() for t in got] == step["expect"], f"step {number}"


def wait_for(condition, timeout_s=5.0):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


FROST = {"name": "frost", "metric": "temp_in", "below": 2.0, "clear_at": 3.0}


def firing(metrics, rule, source):
    return metrics.registry.get_sample_value("telemetry_gateway_alerts_firing", {"rule": rule, "source": source})


def frame(source, ts_ms, **values):
    return NewFrame.of(source, ts_ms, ts_ms, tuple(values.items()))


def test_transitions_log_set_the_gauge_and_feed_the_status_seam(caplog):
    metrics = Metrics()
    alerting = Alerting(parse_alert_rules([FROST], ""), metrics, 1000, start_ms=0)
    with caplog.at_level(logging.INFO, logger="telemetry_gateway"):
        alerting.frames([frame("g1", 1_000, temp_in=5.0, humidity=40.0), frame("g1", 2_000, temp_in=1.5)])
        assert alerting.states() == {"g1": [{"rule": "frost", "state": "firing",
                                             "since": "1970-01-01T00:00:02.000Z"}]}
        assert firing(metrics, "frost", "g1") == 1
        alerting.frames([frame("g1", 3_000, temp_in=3.0)])
    assert firing(metrics, "frost", "g1") == 0
    assert [r.getMessage() for r in caplog.records] == [
        "event=alert_raised rule=frost source=g1 kind=below metric=temp_in value=1.5 threshold=2 at=2000",
        "event=alert_cleared rule=frost source=g1 kind=below metric=temp_in value=3 threshold=3 at=3000"]
    assert [r.levelname for r in caplog.records] == ["WARNING", "INFO"]


def test_silence_is_ticked_and_forgotten_sources_lose_their_series():
    metrics = Metrics()
    alerting = Alerting(parse_alert_rules([{"name": "quiet", "silent_s": 1.0}], ""), metrics, 1, known=["old"],
                        start_ms=0)
    alerting.tick(1_001)
    assert firing(metrics, "quiet", "old") == 1
    alerting.frames([frame("new", 5, temp_in=1.0)])  # max_sources 1: "old" is forgotten
    assert firing(metrics, "quiet", "old") is None


def test_the_sources_an_earlier_run_left_are_known(tmp_path):
    """Silence rules on "*" watch them from the start: receipt stamps (frames without t) and stored seqs (v1)."""
    spool = Spool(tmp_path / "spool.sqlite")
    try:
        spool.commit([], [], {"stamped": 5})
        with sqlite3.connect(spool.path) as db:
            db.execute("INSERT INTO source_seqs (source, seq, ts_ms) VALUES ('clocked', 7, 0)")
        spool.close()
        spool = Spool(tmp_path / "spool.sqlite")
        assert sorted(Ingest(Config(), spool, Metrics(), lambda: None).known_sources) == ["clocked", "stamped"]
    finally:
        spool.close()


def script(tmp_path, body):
    path = tmp_path / f"cmd{len(list(tmp_path.iterdir()))}.py"
    path.write_text(f"import os, sys, time\n{body}\n")
    return [sys.executable, str(path)]


def transition(source="g1", state="firing"):
    return Transition("frost", source, state, "below", "temp_in", 1.5, 2.0, 1_700_000_000_123)


def test_the_command_gets_the_alert_in_its_environment_and_no_credentials():
    service_env = {"PATH": "/bin", "LANG": "C.UTF-8", "HOME": "/var/lib/telemetry-gateway", "TZ": "UTC",
                   "TELEMETRY_CASSANDRA_PASSWORD": "s3cret", "CREDENTIALS_DIRECTORY": "/run/credentials/gw",
                   "NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "60000000", "WATCHDOG_PID": "1",
                   "SOME_SECRET": "x", "LD_PRELOAD": "/tmp/evil.so"}
    env = command_env(transition(), service_env)
    assert env == {"PATH": "/bin", "LANG": "C.UTF-8", "HOME": "/var/lib/telemetry-gateway", "TZ": "UTC",
                   "ALERT_RULE": "frost", "ALERT_SOURCE": "g1", "ALERT_STATE": "firing",
                   "ALERT_KIND": "below", "ALERT_METRIC": "temp_in", "ALERT_VALUE": "1.5", "ALERT_THRESHOLD": "2",
                   "ALERT_AT": "1700000000123", "ALERT_TIME": "2023-11-14T22:13:20.123Z"}


def test_one_run_in_flight_per_rule_the_newest_waiting_per_source(tmp_path):
    out = tmp_path / "runs"
    argv = script(tmp_path, f"open({str(out)!r}, 'a').write(os.environ['ALERT_SOURCE'] + ' ' + "
                            "os.environ['ALERT_STATE'] + chr(10))\n"
                            "time.sleep(0.3 if os.environ['ALERT_SOURCE'] == 'g1' else 0)")
    rules = parse_alert_rules([{**FROST, "command": argv}], "")
    failures = []
    commands = AlertCommands(rules, failures.append)
    commands.submit(transition("g1", "firing"))
    commands.submit(transition("g2", "firing"))  # waits for g1's run
    commands.submit(transition("g2", "ok"))  # replaces g2's waiting transition
    commands.submit(transition("g3", "firing"))
    wait_for(commands.idle)
    assert out.read_text().splitlines() == ["g1 firing", "g2 ok", "g3 firing"]
    assert failures == []


SLOW_WITH_A_CHILD = """import subprocess
child = subprocess.Popen(["sleep", "30"])
open({pid_file!r}, "w").write(str(child.pid))
time.sleep(30)"""


def gone(pid: str) -> bool:
    """No such process, or a zombie nobody has reaped yet."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_failed_runs_are_logged_and_counted_never_retried(tmp_path, caplog):
    metrics = Metrics()
    rules = parse_alert_rules([{**FROST, "command": script(tmp_path, "sys.exit(3)")},
                               {**FROST, "name": "slow", "command": script(tmp_path, "time.sleep(30)"),
                                "command_timeout_s": 0.2},
                               {**FROST, "name": "absent", "command": [str(tmp_path / "no-such-program")]}], "")
    alerting = Alerting(rules, metrics, 1000, start_ms=0)
    with caplog.at_level(logging.WARNING, logger="telemetry_gateway"):
        started = time.monotonic()
        alerting.frames([frame("g1", 1_000, temp_in=0.0)])
        assert time.monotonic() - started < 0.2  # the ingest never waits for a command
        wait_for(alerting.commands.idle)
    failed = sorted(r.getMessage() for r in caplog.records if "alert_command_failed" in r.getMessage())
    assert len(failed) == 3
    assert "rule=absent source=g1 state=firing reason=not_started" in failed[0]
    assert "rule=frost source=g1 state=firing reason=exit_status detail=\"exit status 3\"" in failed[1]
    assert "rule=slow source=g1 state=firing reason=timeout" in failed[2]
    for rule in ("frost", "slow", "absent"):
        assert metrics.registry.get_sample_value("telemetry_gateway_alert_command_failures_total", {"rule": rule}) == 1


BACKGROUNDS_A_CHILD = """import subprocess
child = subprocess.Popen(["sleep", "30"])
open({pid_file!r}, "w").write(str(child.pid))"""


def test_a_child_the_command_left_running_is_killed_when_it_exits(tmp_path):
    pid_file = tmp_path / "child.pid"
    rules = parse_alert_rules([{**FROST, "command": script(tmp_path, BACKGROUNDS_A_CHILD.format(
        pid_file=str(pid_file)))}], "")
    failures = []
    commands = AlertCommands(rules, failures.append)
    commands.submit(transition())
    wait_for(commands.idle)
    assert failures == []  # the run itself exited 0
    wait_for(lambda: gone(pid_file.read_text()))  # its backgrounded sleep went with its group


def test_stop_kills_runs_in_flight_with_their_children(tmp_path):
    pid_file = tmp_path / "child.pid"
    rules = parse_alert_rules([{**FROST, "command": script(tmp_path, SLOW_WITH_A_CHILD.format(pid_file=str(pid_file))),
                                "command_timeout_s": 60}], "")
    commands = AlertCommands(rules, lambda rule: None)
    commands.submit(transition())
    wait_for(lambda: pid_file.exists() and pid_file.read_text())
    started = time.monotonic()
    commands.stop()
    wait_for(commands.idle)
    assert time.monotonic() - started < 2
    wait_for(lambda: gone(pid_file.read_text()))  # the run's whole process group
