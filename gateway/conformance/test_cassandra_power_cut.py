"""Gateway conformance: Cassandra loses power while the gateways' writes are in flight. The node is a one-node
cluster of its own (telemetry_conformance.power_cut_node: node 5, its commit log on the power-cut file system,
`commitlog_sync: batch` as every node of the project runs), so the shared node is never touched. The power cut
SIGKILLs Cassandra, then its file system forgets every commit-log write that was not fsynced; the node is started
again on the same folders (commit-log replay) while the gateways hold and retry.

Allowed loss: none. A frame a gateway counted as written was acknowledged by Cassandra, and the gateway will never
send it again, so the node must still have it after the cut; every other frame is retried from the spool. Checked
row by row for every gateway under test side by side, each with a board and a keyspace of its own: every frame's
values and its exact timestamp, each stored exactly once.

The same scenario on a node with Cassandra's default, `commitlog_sync: periodic`, fails: such a node acknowledges
before it fsyncs, and a cut takes up to its last 10 s of acknowledged writes (`TELEMETRY_POWER_CUT_COMMITLOG_SYNC=
periodic` runs it so; deploy/local/commitlog-power-cut measures what each setting loses)."""

from __future__ import annotations

import os
import random
import time
import uuid

import pytest

from telemetry_conformance import GatewayUnderTest, Board, Stream, TimedWriter, assert_each_frame_once, \
    gateways_under_test, stored_frames, utc_days_around_now, wait_for
from telemetry_conformance.power_cut_node import PowerCutNode
from telemetry_conformance.scenario_fixtures import gateways  # noqa: F401 (fixture)

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # conftest: one power cut for every gateway under test

HOUR_MS = 3_600_000
RATE = 200  # frames/s per gateway


@pytest.fixture(scope="module")
def power_cut_node():
    """The node, started afresh once for this module, killed and unmounted afterwards."""
    node = PowerCutNode(commitlog_sync=os.environ.get("TELEMETRY_POWER_CUT_COMMITLOG_SYNC", "batch"))
    try:
        started_in = node.start_fresh()
        print(f"node {node.node} ({node.commitlog_sync}) up in {started_in:.1f} s")
        yield node
    finally:
        node.close()


def total(gateway: GatewayUnderTest, name: str) -> float:
    """A counter summed over its labels."""
    return sum(v for (sample, _), v in gateway.metrics_or_none().items() if sample == name)


def cut_while_writing(node: PowerCutNode, gateways: dict[str, GatewayUnderTest], timeout: float = 20) -> dict:
    """Cuts the power as soon as a scrape shows every gateway with requests in flight (or, after timeout/2, each
    with requests in flight or rows written since the scrape before): a cut that could only hit an idle gateway
    proves nothing for it. Returns, per gateway, its frames counted as written at that scrape."""
    deadline, fallback_after = time.monotonic() + timeout, time.monotonic() + timeout / 2
    previous = {name: g.metric("telemetry_gateway_rows_written_total") for name, g in gateways.items()}
    while True:
        time.sleep(0.02)
        seen = {name: (g.metric("telemetry_gateway_requests_in_flight"),
                       g.metric("telemetry_gateway_rows_written_total"),
                       g.metric("telemetry_gateway_frames_written_total")) for name, g in gateways.items()}
        fallback = time.monotonic() > fallback_after
        if all(flying > 0 or (rows > previous[name] and fallback) for name, (flying, rows, _) in seen.items()):
            break
        assert time.monotonic() < deadline, f"no moment with every gateway writing: {seen}"
        previous = {name: rows for name, (_, rows, _) in seen.items()}
    node.power_cut()
    return {name: written for name, (_, _, written) in seen.items()}


def test_cassandra_power_cut_loses_no_acknowledged_frame(power_cut_node, tmp_path, gateways):  # noqa: F811
    """At 200 frames/s per gateway, at a random moment 1-3 s into the stream, with requests in flight: Cassandra's
    power is cut and it is started again (its commit log replayed) while the boards keep sending. Afterwards every
    gateway has read and written every frame (spool empty), and every frame is in Cassandra exactly once, with its
    values and timestamp: in particular every frame the gateway had counted as written before the cut."""
    node = power_cut_node
    t_base_ms = int(time.time() * 1000) - HOUR_MS
    rigs = {}
    for name, command in gateways_under_test().items():
        keyspace = f"power_cut_{name}_{uuid.uuid4().hex[:8]}"
        node.migrate(keyspace)
        folder = tmp_path / name
        folder.mkdir()
        board = Board(folder / "ttyUSB0")
        gateway = GatewayUnderTest.configure(folder, [board.link], keyspace, node.host)
        gateways.append(gateway)
        gateway.start(command=command)
        rigs[name] = (gateway, keyspace, TimedWriter(board, Stream(f"P-{name}"), rate=RATE, t_base_ms=t_base_ms))
    running = {name: gateway for name, (gateway, _, _) in rigs.items()}
    pids = {name: gateway.process.pid for name, gateway in running.items()}
    for _, _, writer in rigs.values():
        writer.start()
    try:
        for name, gateway in running.items():
            wait_for(lambda: gateway.metric("telemetry_gateway_frames_written_total") >= RATE, 30,
                     f"a second of frames written by the {name} gateway")
        time.sleep(random.uniform(0, 2))
        errors_before = {name: total(g, "telemetry_gateway_write_errors_total") for name, g in running.items()}
        written_at_cut = cut_while_writing(node, running)
        for name, gateway in running.items():
            wait_for(lambda: total(gateway, "telemetry_gateway_write_errors_total") > errors_before[name], 15,
                     f"the {name} gateway to see the power cut")
        restarted_in = node.start()
        during_outage = {name: g.metric("telemetry_gateway_spool_frames") for name, g in running.items()}
        time.sleep(1)  # frames after the restart too
    finally:
        sent = {name: writer.finish() for name, (_, _, writer) in rigs.items()}

    # Every frame read and acknowledged (the spool empty): from here on a missing row is one that Cassandra
    # acknowledged and then lost.
    for name, gateway in running.items():
        wait_for(lambda: total(gateway, "telemetry_gateway_frames_accepted_total") == len(sent[name])
                 and gateway.metric("telemetry_gateway_spool_frames") == 0, 300,
                 f"every frame read and acknowledged by the {name} gateway")
    cluster = node.cluster()
    try:
        stored = {name: stored_frames(cluster.connect(keyspace), writer.stream.source, utc_days_around_now())
                  for name, (_, keyspace, writer) in rigs.items()}
    finally:
        cluster.shutdown()
    replayed = node.log_lines("replayed mutations")
    for name, (gateway, _, writer) in rigs.items():
        print(f"{name}: sent {len(sent[name])}, {written_at_cut[name]:.0f} counted as written at the cut, stored "
              f"{len(stored[name])}, lost {len(sent[name]) - len(stored[name])} (allowed: 0); "
              f"{during_outage[name]:.0f} frames spooled while the node restarted ({restarted_in:.1f} s)")
        assert_each_frame_once(stored[name], {n for n, _, _ in sent[name]}, writer, who=name)
        assert written_at_cut[name] > 0, name
        assert during_outage[name] > 0, f"{name}: the outage was not real (no frame waited in the spool)"
        assert gateway.process.poll() is None and gateway.process.pid == pids[name], f"{name}: the gateway restarted"
        assert gateway.stop() == 0, name
        assert "stage_died" not in gateway.log() and "Traceback" not in gateway.log(), name
    print(replayed[-1] if replayed else "no commit-log replay logged")
    assert replayed, "the restart did not replay the commit log"
