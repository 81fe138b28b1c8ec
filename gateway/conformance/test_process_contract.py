"""The gateway as a process, any implementation (GATEWAY_COMMAND), against gateway/contract/process.md and logs.md:
the systemd notifications (READY, WATCHDOG every WATCHDOG_USEC / 2, STOPPING on $NOTIFY_SOCKET), SIGTERM and
SIGHUP → exit 0, every log line in the contract's format and every event named in logs.md, usage errors exit 2,
and `check` failing clearly. No Cassandra: it is unreachable here, which the gateway must survive."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time

import pytest

from telemetry_conformance import ROOT, gateway_command, running, stop

LOGS_MD = ROOT / "gateway" / "contract" / "logs.md"
# logs.md, "A line" and "Values": a plain value, or a quoted one (a JSON string of printable ASCII).
_VALUE = r'(?:[!#-<>-\[\]-~]+|"(?:[ !#-\[\]-~]|\\["\\nrt]|\\u[0-9a-f]{4})*")'
LINE_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) "
                     rf"event=([a-z0-9_]+)((?: [a-z0-9_]+={_VALUE})*)")
FIELD_RE = re.compile(rf" ([a-z0-9_]+)=({_VALUE})")


def contract_events() -> set[str]:
    """The event names of logs.md's table."""
    return set(re.findall(r"^\| `([a-z0-9_]+)` \|", LOGS_MD.read_text(encoding="utf-8"), flags=re.M))


def event_lines(log: str) -> list[tuple[str, dict[str, str]]]:
    """Every event line of a log as (event, {key: value as written}); a line with event= in another form fails."""
    events = []
    for line in log.splitlines():
        if "event=" not in line:
            continue
        match = LINE_RE.fullmatch(line)
        assert match, f"not a contract log line: {line!r}"
        fields = FIELD_RE.findall(match.group(2))
        assert len({key for key, _ in fields}) == len(fields), f"a key twice: {line!r}"
        events.append((match.group(1), dict(fields)))
    return events


def value(text: str) -> str:
    """A field's value as written → the text it stands for."""
    return json.loads(text) if text.startswith('"') else text


def test_systemd_notify_watchdog_and_sigterm(tmp_path):
    sock_path = tmp_path / "notify.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(sock_path))
    listener.settimeout(20)
    env = dict(os.environ, NOTIFY_SOCKET=str(sock_path), WATCHDOG_USEC="1000000",
               TELEMETRY_CASSANDRA_PORT="1", TELEMETRY_METRICS_LISTEN="")
    process = subprocess.Popen([*gateway_command(), "run", "--port", str(tmp_path / "absent-tty"),
                                "--spool", str(tmp_path / "spool.sqlite")], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        messages = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and sum("WATCHDOG=1" in m for m in messages) < 2:
            messages.append(listener.recv(4096).decode())
        assert messages[0] == "READY=1"
        assert sum("WATCHDOG=1" in m for m in messages) >= 2  # pinged every WATCHDOG_USEC / 2
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        while "STOPPING=1" not in messages[-1]:
            messages.append(listener.recv(4096).decode())
    finally:
        if process.poll() is None:
            process.kill()
        listener.close()
    log = process.stdout.read().decode()
    assert "event=serial_absent" in log and "event=cassandra_unreachable" in log
    assert "event=gateway_stopped" in log and "Traceback" not in log
    events = event_lines(log)
    assert {name for name, _ in events} <= contract_events()
    names = [name for name, _ in events]
    assert names.index("gateway_started") < names.index("gateway_stopping") < names.index("gateway_stopped")
    assert names[-1] == "gateway_stopped"
    absent = dict(events)["serial_absent"]
    assert value(absent["port"]) == str(tmp_path / "absent-tty")
    assert absent["action"].startswith('"')  # text with spaces: quoted


def run_then_stop(args: list[str], marker: bytes, signal_number: int, stdin: bytes | None = None):
    """`run ARGS` (no Cassandra); once its output holds marker, the signal; exit 0 → the log's event lines."""
    env = dict(os.environ, TELEMETRY_CASSANDRA_PORT="1", TELEMETRY_METRICS_LISTEN="")
    process = subprocess.Popen([*gateway_command(), "run", *args, "--log-level", "info"], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        if stdin is not None:
            process.stdin.write(stdin)
            process.stdin.flush()
        deadline = time.monotonic() + 20
        output = b""
        while marker not in output and time.monotonic() < deadline:
            output += process.stdout.read1(65536)
        process.send_signal(signal_number)
        assert process.wait(timeout=40) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.stdin.close()
    events = event_lines((output + process.stdout.read()).decode())
    assert [name for name, _ in events][-1] == "gateway_stopped"
    return events


def test_sighup_is_an_orderly_stop(tmp_path):
    events = run_then_stop(["--port", str(tmp_path / "absent-tty"), "--spool", str(tmp_path / "spool.sqlite")],
                           b"event=gateway_started", signal.SIGHUP)
    started = dict(events)["gateway_started"]
    assert started["inputs"] == "1" and started["metrics"] == "off"


def test_a_stop_while_stdin_is_silent(tmp_path):
    """`run --input -` with a writer that says nothing more: SIGTERM still stops the gateway in order, exit 0."""
    events = run_then_stop(["--input", "-", "--spool", str(tmp_path / "spool.sqlite")], b"event=status_line",
                           signal.SIGTERM, stdin=b"#hello\n")
    assert ("status_line", {"input": "-", "text": "hello"}) in events


@pytest.mark.parametrize("args", [[], ["bogus"], ["run", "--bogus"], ["check", "--port"],
                                  ["run", "--exit-when-drained=1"], ["check", "--conf", "x.toml"],
                                  ["decode", "--source", "room"]])
def test_usage_errors_exit_2(args):
    result = subprocess.run([*gateway_command(), *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result
    assert result.stdout == "" and result.stderr.strip() and "Traceback" not in result.stderr


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["check", "-h"], ["decode", "--help"]])
def test_help_exits_0(args):
    result = subprocess.run([*gateway_command(), *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() and result.stderr == ""


def test_check_fails_clearly_without_cassandra(tmp_path):
    result = subprocess.run([*gateway_command(), "check", "--port", str(tmp_path / "absent-tty"),
                             "--spool", str(tmp_path / "spool.sqlite")],
                            env=dict(os.environ, TELEMETRY_CASSANDRA_PORT="1"), capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 1
    assert "serial port" in result.stderr and "does not exist" in result.stderr
    assert "cannot reach Cassandra at 127.0.0.1:1" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_host_name_that_does_not_resolve_is_a_problem_not_a_crash(tmp_path):
    """DNS may be down when a Pi boots: `check` reports it (exit 1), and `run` keeps retrying instead of dying."""
    env = dict(os.environ, TELEMETRY_CASSANDRA_HOSTS="no-such-host.invalid", TELEMETRY_METRICS_LISTEN="")
    check = subprocess.run([*gateway_command(), "check", "--spool", str(tmp_path / "spool.sqlite")], env=env,
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "problem: cannot reach Cassandra at no-such-host.invalid:9042" in check.stderr
    assert "Traceback" not in check.stderr and "    at " not in check.stderr
    with running([*gateway_command(), "run", "--port", str(tmp_path / "absent-tty"),
                  "--spool", str(tmp_path / "spool.sqlite")], env=env) as process:
        time.sleep(3)
        assert process.poll() is None, "the gateway exited instead of retrying"
        log = stop(process)
    assert "event=cassandra_unreachable" in log and "Traceback" not in log and "stage_died" not in log, log

