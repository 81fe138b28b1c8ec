"""A gateway whose Cassandra login is refused, against the real authenticating node (conftest's auth_node, roles
from schema/migrate): `check` says so and fails; `run` keeps reading, keeps every frame in its spool, shows it in
/metrics and in one log line, and sends everything exactly once as soon as its credentials file holds the right
password, without a restart. Allowed loss: none."""

import os
import subprocess
import time
from datetime import datetime, timezone

import pytest
from telemetry_cassandra import connect_cluster, read_credentials_file

from telemetry_conformance import (Board, GatewayUnderTest, Stream, TimedWriter, assert_each_frame_once,
                                   gateway_command, stored_frames, wait_for)
from telemetry_conformance.scenario_fixtures import gateways  # noqa: F401 (fixture)

pytestmark = pytest.mark.cassandra
WRONG = "not-the-gateway-password"


def test_check_with_a_refused_login_fails_and_says_why(auth_node, tmp_path):
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], auth_node.keyspace, auth_node.host)
    creds = auth_node.credentials_file(tmp_path, "telemetry_gateway", password=WRONG)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TELEMETRY_")}
    env["TELEMETRY_CASSANDRA_CREDENTIALS_FILE"] = str(creds)
    result = subprocess.run([*gateway_command(), "check", "--config", str(gateway.config_path)], env=env,
                            capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Authentication" in output or "authentication" in output, output
    assert WRONG not in output
    right = auth_node.credentials_file(tmp_path, "telemetry_gateway")
    result = subprocess.run([*gateway_command(), "check", "--config", str(gateway.config_path)],
                            env={**env, "TELEMETRY_CASSANDRA_CREDENTIALS_FILE": str(right)},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_refused_login_keeps_every_frame_until_the_right_password_is_configured(auth_node, tmp_path, gateways):
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], auth_node.keyspace, auth_node.host)
    creds = auth_node.credentials_file(tmp_path, "telemetry_gateway", password=WRONG)
    gateway.start(TELEMETRY_CASSANDRA_CREDENTIALS_FILE=str(creds))
    gateways.append(gateway)
    source = f"auth-{gateway_command()[-1].rsplit('/', 1)[-1][:12]}-{int(time.time())}"
    writer = TimedWriter(board, Stream(source), rate=50, t_base_ms=int(time.time() * 1000) - 600_000)
    writer.start()
    wait_for(lambda: len(writer.sent) >= 150, 60, "150 frames written")
    refused = writer.sent[-1][0]
    wait_for(lambda: gateway.spool_depth() >= refused, 30, "the frames sent so far in the spool")
    assert gateway.metric("telemetry_gateway_cassandra_up") == 0
    log = gateway.log()
    assert "event=cassandra_unreachable" in log and "kind=unauthorized" in log, log[-2000:]
    assert "check the Cassandra credentials" in log and WRONG not in log
    assert log.count("event=cassandra_unreachable") < 20, "repeated refusals are rate-limited in the log"

    username, password = read_credentials_file(str(auth_node.admin_file))
    admin = connect_cluster([auth_node.host], username=username, password=password)
    try:
        session = admin.connect(auth_node.keyspace)
        days = {datetime.fromtimestamp((writer.t_base_ms + n) / 1000, timezone.utc).date()
                for n in range(1, refused + 5000)}
        assert stored_frames(session, source, days) == {}, "nothing is written with a refused login"

        auth_node.credentials_file(tmp_path, "telemetry_gateway")  # the right password, same file
        wait_for(lambda: gateway.metric("telemetry_gateway_cassandra_up") == 1, 60, "the gateway logged in")
        wait_for(lambda: len(writer.sent) >= refused + 100, 60, "100 more frames after the login")
        sent = {n for n, _, _ in writer.finish()}
        wait_for(lambda: gateway.spool_depth() == 0, 60, "the spool drained")
        # Logged in, the default policy holds new frames in memory until Cassandra acknowledges them: an empty
        # spool file does not mean the last frames have landed yet (they do within a fraction of a second).
        wait_for(lambda: len(stored_frames(session, source, days)) >= len(sent), 60, "every frame in Cassandra")
        assert gateway.process.poll() is None, "the gateway was never restarted"
        assert_each_frame_once(stored_frames(session, source, days), sent, writer, who=source)
    finally:
        admin.shutdown()


def test_a_credentials_file_it_cannot_use_keeps_the_gateway_running_and_spooling(tmp_path, gateways):
    """A credentials file without a password (an install whose password was never filled in): no crash and no
    restart loop under systemd; every frame is kept, and the log names the file each (rate-limited) attempt."""
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], "telemetry", "127.0.0.1")
    creds = tmp_path / "credentials.toml"
    creds.write_text('username = "telemetry_gateway"\n')
    creds.chmod(0o600)  # a mode the group may read is refused at start (config.md)
    gateway.start(TELEMETRY_CASSANDRA_CREDENTIALS_FILE=str(creds))
    gateways.append(gateway)
    stream = Stream("nopass")
    for n in range(1, 21):
        board.write(stream.frame(n, temp_in=n / 10))
    wait_for(lambda: gateway.spool_depth() == 20, 30, "20 frames in the spool")
    wait_for(lambda: "event=cassandra_unreachable" in gateway.log(), 30, "the failed connect logged")
    time.sleep(3)  # several connect attempts (retry_max_s = 1)
    assert gateway.process.poll() is None, gateway.log()
    assert gateway.metric("telemetry_gateway_cassandra_up") == 0
    log = gateway.log()
    assert str(creds) in log and "needs username and password" in log, log[-2000:]
    assert "Traceback" not in log and "    at " not in log, log[-2000:]
