"""The Python gateway as a process: config errors and a full spool survived (the systemd notify contract and
`check` are conformance scenarios: gateway/conformance/test_process_contract.py; the systemd units' checks are in
deploy/pi/tests). No Cassandra needed: it is unreachable here, which the gateway must survive."""

import os
import socket
import subprocess
import sys
import time

import pytest

from telemetry_conformance import running, scrape_metrics, stop

GATEWAY = [sys.executable, "-m", "telemetry_gateway"]


def test_bad_config_exits_2_with_the_key(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text('[spool]\nfsync = "never"\n')
    result = subprocess.run([*GATEWAY, "run", "--config", str(config)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert result.stderr.strip() == ("telemetry-gateway: config error at spool.fsync [choice]: must be one of "
                                     f"deferred, batch, interval, not \"never\" (in {config})")


@pytest.mark.parametrize("policy", ["pause", "drop_oldest"])
def test_a_full_spool_is_reported_and_survived(tmp_path, policy):
    from telemetry_board_sim.simulation import SimulationSpec, simulated_lines
    frames = tmp_path / "frames.txt"
    count = 40_000  # more than the ingest queue (~8,000), a group (5,000) and the 0.1 MB spool hold together
    frames.write_bytes(b"".join(simulated_lines(SimulationSpec(sources=3, count=count), 1_780_000_000_000)))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, TELEMETRY_CASSANDRA_PORT="1", TELEMETRY_SPOOL_MAX_MB="0.1",
               TELEMETRY_SPOOL_WHEN_FULL=policy, TELEMETRY_METRICS_LISTEN=f"127.0.0.1:{port}")
    with running([*GATEWAY, "run", "--input", str(frames), "--spool", str(tmp_path / "s.sqlite")],
                 env=env) as process:
        full = ("telemetry_gateway_spool_full_total", (("kind", "cap"),))
        dropped = ("telemetry_gateway_spool_dropped_frames_total", ())
        lines_read = ("telemetry_gateway_lines_read_total", (("input", str(frames)),))
        # Wait for the policy's steady state: reading stopped (pause), or old frames dropped (drop_oldest).
        deadline = time.monotonic() + 30
        before = {}
        while True:
            assert process.poll() is None, process.stdout.read().decode()
            assert time.monotonic() < deadline, f"no steady state under {policy}: {before}"
            time.sleep(1)
            now = scrape_metrics(port) or {}
            if policy == "pause" and now.get(full, 0) >= 1 and now.get(lines_read) == before.get(lines_read):
                assert now.get(dropped, 0) == 0 and now[lines_read] < count  # reading paused, nothing dropped
                assert now[("telemetry_gateway_reading_paused", ())] == 1
                break
            if policy == "drop_oldest" and now.get(dropped, 0) > 0:
                assert now.get(full, 0) >= 1
                break
            before = now
        log = stop(process)
    assert "event=spool_full" in log and "Traceback" not in log


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the bug we inject
def test_a_dead_stage_ends_the_gateway_with_status_1_for_a_restart(tmp_path, caplog):
    import gc
    from telemetry_gateway.config import load_config
    from telemetry_gateway.service import Gateway

    config = load_config(None, overrides={"spool": {"path": str(tmp_path / "spool.sqlite")},
                                          "metrics": {"listen": ""}, "cassandra": {"port": 1}})
    (tmp_path / "lines").write_bytes(b"")
    gateway = Gateway(config, streams=[str(tmp_path / "lines")])

    def broken_sender():
        raise RuntimeError("a bug in the sender")

    gateway.sender.run = broken_sender
    try:
        started = time.monotonic()
        assert gateway.run() == 1
        assert time.monotonic() - started < 10
    finally:
        gc.unfreeze()  # run() froze the test process's objects
    assert "event=stage_died stages=sender" in caplog.text
