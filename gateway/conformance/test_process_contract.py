"""The gateway as a process, any implementation (GATEWAY_COMMAND): the systemd contract (READY, WATCHDOG every
WATCHDOG_USEC / 2, STOPPING on $NOTIFY_SOCKET), SIGTERM → exit 0, and `check` failing clearly. No Cassandra: it is
unreachable here, which the gateway must survive."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

from telemetry_conformance import gateway_command


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
    process = subprocess.Popen([*gateway_command(), "run", "--port", str(tmp_path / "absent-tty"),
                                "--spool", str(tmp_path / "spool.sqlite")], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        time.sleep(3)
        assert process.poll() is None, "the gateway exited instead of retrying"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
    log = process.stdout.read().decode()
    assert "event=cassandra_unreachable" in log and "Traceback" not in log and "stage_died" not in log, log

