"""Gateway conformance: Cassandra crashes (SIGKILL, no drain) while the gateways' requests are in flight and the
boards keep sending. Checked row by row: every frame's every metric value and its exact timestamp, each exactly
once, read back through a session opened after the restart. Every gateway under test, at each spool fsync policy
(the default and batch), runs side by side with a board, spool and source of its own, through the same crash: one
SIGKILL of the node serves them all."""

from __future__ import annotations

import time
import uuid

import pytest

from conftest import connect, launcher, migrate
from telemetry_conformance import GatewayUnderTest, Stream, TimedWriter, assert_each_frame_once, stored_frames, \
    utc_days_around_now, wait_for
from telemetry_conformance.scenario_fixtures import gateways, side_by_side  # noqa: F401 (fixtures)

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # conftest: one crash for every gateway under test, not one per gateway

HOUR_MS = 3_600_000
RATE = 250  # frames/s per rig: four rigs send 1000 frames/s in all, the load of two at test_gateway_sigkill.py's 500
POLICIES = {"default": None, "batch": "batch"}  # tag -> spool fsync (None: the gateway's default)


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


def total(gateway: GatewayUnderTest, name: str) -> float:
    """A counter summed over its labels."""
    return sum(v for (sample, _), v in gateway.metrics_or_none().items() if sample == name)


def write_errors(gateway: GatewayUnderTest) -> float:
    return total(gateway, "telemetry_gateway_write_errors_total")


def kill_while_writing(gateways: dict[str, GatewayUnderTest], timeout: float = 20) -> dict[str, tuple[float, float]]:
    """SIGKILLs the test node as soon as a round of scrapes shows every gateway's requests in flight (or, if no
    round in timeout/2 caught that, each gateway either in flight or with rows written since the previous round
    ~20 ms before): a kill that could only hit an idle gateway would prove nothing for it. Returns, per gateway,
    the requests in flight and the rows written in that last interval."""
    deadline = time.monotonic() + timeout
    fallback_after = time.monotonic() + timeout / 2
    previous = {name: gateway.metric("telemetry_gateway_rows_written_total") for name, gateway in gateways.items()}
    while True:
        time.sleep(0.02)
        seen = {name: (gateway.metric("telemetry_gateway_requests_in_flight"),
                       gateway.metric("telemetry_gateway_rows_written_total")) for name, gateway in gateways.items()}
        fallback = time.monotonic() > fallback_after
        if all(in_flight > 0 or (written > previous[name] and fallback) for name, (in_flight, written) in seen.items()):
            break
        idle = sorted(name for name, (in_flight, written) in seen.items() if written == previous[name])
        assert time.monotonic() < deadline, f"{idle} wrote nothing: no moment to crash Cassandra mid-write"
        previous = {name: written for name, (_, written) in seen.items()}
    killed = launcher("kill")
    assert "killed (SIGKILL" in killed.stdout, killed.stdout + killed.stderr
    return {name: (in_flight, written - previous[name]) for name, (in_flight, written) in seen.items()}


def test_cassandra_sigkill_with_writes_in_flight_loses_nothing(keyspace, cassandra_node, side_by_side):
    """The test node is SIGKILLed while every rig's requests are in flight at 250 frames/s each, stays down for 5 s
    while frames keep coming, and is started again (commit-log replay). Each gateway runs at the default policy
    (frames held while Cassandra keeps up: the crash makes them due at once) and at batch (every frame committed
    before it is sent), four rigs through the one crash. Allowed loss: none (0 frames). A write the node
    acknowledged is in its synced commit log (the launcher's nodes run commitlog_sync: batch), so the replay restores
    it; a write it did not acknowledge is retried by the gateway from its spool (idempotent: same key, same value).
    Every frame is checked: each metric's value, ts = its explicit t, stored exactly once. Each gateway must ride it
    out: write errors counted, the same process throughout (no restart)."""
    rigs, t_base_ms = {}, int(time.time() * 1000) - HOUR_MS
    for tag, fsync in POLICIES.items():
        for name, (board, gateway, start) in side_by_side(tag=tag, fsync=fsync).items():
            start()
            rigs[name] = (gateway, gateway.process.pid, TimedWriter(board, Stream(f"C-{name}"), rate=RATE,
                                                                    t_base_ms=t_base_ms))
    running = {name: gateway for name, (gateway, _, _) in rigs.items()}
    for _, _, writer in rigs.values():
        writer.start()
    try:
        for name, gateway in running.items():
            wait_for(lambda: gateway.metric("telemetry_gateway_rows_written_total") >= 3 * RATE, 30,
                     f"a second of frames written by the {name} gateway")
        errors_before = {name: write_errors(gateway) for name, gateway in running.items()}
        at_kill = kill_while_writing(running)
        killed_at = time.monotonic()
        try:
            for name, gateway in running.items():
                wait_for(lambda: write_errors(gateway) > errors_before[name], 15,
                         f"the {name} gateway to see the crash")
            time.sleep(max(0.0, killed_at + 5 - time.monotonic()))  # the boards keep sending meanwhile
            during_outage = {name: gateway.metric("telemetry_gateway_spool_frames")
                             for name, gateway in running.items()}
        finally:
            started = launcher("start", check=False)
        assert started.returncode == 0, started.stdout + started.stderr
        time.sleep(2)  # frames after the restart too
    finally:
        sent = {name: writer.finish() for name, (_, _, writer) in rigs.items()}

    # Each gateway has read every frame and Cassandra has acknowledged them all (its spool is empty): from here on
    # a missing row is one that Cassandra acknowledged and then lost.
    for name, gateway in running.items():
        wait_for(lambda: total(gateway, "telemetry_gateway_frames_accepted_total") == len(sent[name])
                 and gateway.metric("telemetry_gateway_spool_frames") == 0, 120,
                 f"every frame read and acknowledged by the {name} gateway")
    cluster = connect(cassandra_node)  # sessions from before the kill may still be reconnecting
    try:
        session = cluster.connect(keyspace)
        stored = {name: stored_frames(session, writer.stream.source, utc_days_around_now())
                  for name, (_, _, writer) in rigs.items()}
    finally:
        cluster.shutdown()
    for name, (gateway, pid, writer) in rigs.items():
        # a frame missing now was acknowledged by Cassandra and lost
        assert_each_frame_once(stored[name], {n for n, _, _ in sent[name]}, writer, who=name)
        in_flight, rows_moving = at_kill[name]
        print(f"{name}: sent {len(sent[name])}, stored {len(stored[name])}, lost {len(sent[name]) - len(stored[name])} "
              f"(allowed: 0); at the kill {in_flight:.0f} requests in flight, {rows_moving:.0f} rows written in the "
              f"last scrape interval; {during_outage[name]:.0f} frames spooled during the outage; "
              f"{write_errors(gateway):.0f} write errors")
        assert during_outage[name] > 0, f"{name}: the outage was not real (no frame waited in the spool)"
        assert write_errors(gateway) > errors_before[name], f"{name}: the crash was not seen (no write error)"
        assert gateway.process.poll() is None and gateway.process.pid == pid, f"{name}: the gateway restarted"
        assert gateway.stop() == 0, f"{name}: a clean stop"
        assert "stage_died" not in gateway.log() and "Traceback" not in gateway.log(), \
            f"{name}: a stage died or a traceback in its log"
