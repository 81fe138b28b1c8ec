"""Gateway conformance: Cassandra crashes (SIGKILL, no drain) while the gateway's requests are in flight and the
board keeps sending. Checked row by row: every frame's every metric value and its exact timestamp, each exactly
once, read back through a session opened after the restart."""

from __future__ import annotations

import time
import uuid

import pytest

from conftest import connect, launcher, migrate
from telemetry_conformance import (Board, GatewayUnderTest, Stream, TimedWriter, assert_each_frame_once, stored_frames,
                                   utc_days_around_now, wait_for)

pytestmark = pytest.mark.cassandra

HOUR_MS = 3_600_000
RATE = 500  # frames/s, as in test_faults.py's SIGKILL scenario


@pytest.fixture
def keyspace(cassandra_node):
    """A fresh keyspace, dropped afterwards through a session of its own (those open before the kill may still be
    reconnecting then)."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    assert migrate("--keyspace", name).returncode == 0
    yield name
    cluster = connect(cassandra_node)
    try:
        cluster.connect().execute(f"DROP KEYSPACE IF EXISTS {name}", timeout=60)
    finally:
        cluster.shutdown()


@pytest.fixture(params=[None, "batch"], ids=["default", "batch"])
def gateway(request, tmp_path, keyspace, cassandra_node):
    """At the default policy (frames held while Cassandra keeps up: the crash makes them due at once) and at
    batch (every frame committed before it is sent)."""
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], keyspace, cassandra_node, fsync=request.param)
    gateway.board = board
    yield gateway
    if gateway.process is not None and gateway.process.poll() is None:
        gateway.kill()


def total(gateway: GatewayUnderTest, name: str) -> float:
    """A counter summed over its labels."""
    return sum(v for (sample, _), v in gateway.metrics_or_none().items() if sample == name)


def write_errors(gateway: GatewayUnderTest) -> float:
    return total(gateway, "telemetry_gateway_write_errors_total")


def kill_while_writing(gateway: GatewayUnderTest, timeout: float = 20) -> tuple[float, float]:
    """SIGKILLs the test node as soon as a scrape shows the gateway's requests in flight (or, if no scrape in
    timeout/2 caught one, rows written since the previous scrape ~20 ms before): a kill that could only hit an
    idle node would prove nothing. Returns the requests in flight and the rows written in that last interval."""
    deadline = time.monotonic() + timeout
    fallback_after = time.monotonic() + timeout / 2
    previous = gateway.metric("telemetry_gateway_rows_written_total")
    while True:
        time.sleep(0.02)
        in_flight = gateway.metric("telemetry_gateway_requests_in_flight")
        written = gateway.metric("telemetry_gateway_rows_written_total")
        if in_flight > 0 or (written > previous and time.monotonic() > fallback_after):
            break
        assert time.monotonic() < deadline, "the gateway wrote nothing: no moment to crash Cassandra mid-write"
        previous = written
    killed = launcher("kill")
    assert "killed (SIGKILL" in killed.stdout, killed.stdout + killed.stderr
    return in_flight, written - previous


def test_cassandra_sigkill_with_writes_in_flight_loses_nothing(keyspace, cassandra_node, gateway):
    """The test node is SIGKILLed while the gateway's requests are in flight at 500 frames/s, stays down for 5 s
    while frames keep coming, and is started again (commit-log replay). Allowed loss: none (0 frames). A write the
    node acknowledged is in its synced commit log (the launcher's nodes run commitlog_sync: batch), so the replay
    restores it; a write it did not acknowledge is retried by the gateway from its spool (idempotent: same key,
    same value). Every frame is checked: each metric's value, ts = its explicit t, stored exactly once. The gateway
    itself must ride it out: write errors counted, the same process throughout (no restart)."""
    board = gateway.board
    gateway.start()
    pid = gateway.process.pid
    writer = TimedWriter(board, Stream("C"), rate=RATE, t_base_ms=int(time.time() * 1000) - HOUR_MS)
    writer.start()
    try:
        wait_for(lambda: gateway.metric("telemetry_gateway_rows_written_total") >= 3 * RATE, 30,
                 "a second of frames written")
        errors_before = write_errors(gateway)
        in_flight, rows_moving = kill_while_writing(gateway)
        killed_at = time.monotonic()
        try:
            wait_for(lambda: write_errors(gateway) > errors_before, 15, "the gateway to see the crash")
            time.sleep(max(0.0, killed_at + 5 - time.monotonic()))  # the board keeps sending meanwhile
            during_outage = gateway.metric("telemetry_gateway_spool_frames")
        finally:
            started = launcher("start", check=False)
        assert started.returncode == 0, started.stdout + started.stderr
        time.sleep(2)  # frames after the restart too
    finally:
        sent = writer.finish()

    # The gateway has read every frame and Cassandra has acknowledged them all (the spool is empty): from here on
    # a missing row is one that Cassandra acknowledged and then lost.
    wait_for(lambda: total(gateway, "telemetry_gateway_frames_accepted_total") == len(sent)
             and gateway.metric("telemetry_gateway_spool_frames") == 0, 120, "every frame read and acknowledged")
    cluster = connect(cassandra_node)  # sessions from before the kill may still be reconnecting
    try:
        session = cluster.connect(keyspace)
        numbers = {n for n, _, _ in sent}
        stored = stored_frames(session, writer.stream.source, utc_days_around_now())
    finally:
        cluster.shutdown()
    assert_each_frame_once(stored, numbers, writer)  # a frame missing now was acknowledged by Cassandra and lost
    print(f"sent {len(sent)}, stored {len(stored)}, lost {len(sent) - len(stored)} (allowed: 0); at the kill "
          f"{in_flight:.0f} requests in flight, {rows_moving:.0f} rows written in the last scrape interval; "
          f"{during_outage:.0f} frames spooled during the outage; {write_errors(gateway):.0f} write errors")

    assert during_outage > 0  # the outage was real: frames waited in the spool
    assert write_errors(gateway) > errors_before
    assert gateway.process.poll() is None and gateway.process.pid == pid, "the gateway restarted"
    assert gateway.stop() == 0
    assert "stage_died" not in gateway.log() and "Traceback" not in gateway.log()
