"""Both gateways on the 3-node cluster (contact points 127.0.0.1-3, LOCAL_QUORUM, RF 3) while nodes die: frames
flow through a pty into each gateway the whole time; node 2 is SIGKILLed, then node 3 too (one of three left: no
quorum, every write fails and the spools grow), node 3 comes back, then node 2. Afterwards every frame is in
Cassandra exactly once, value by value with its exact timestamp, read at QUORUM; neither gateway restarted; their
metrics show the failed (and retried) writes. Allowed loss: none."""

from __future__ import annotations

import shlex
import time

import pytest

from cluster_fixtures import connect_cluster, node, quorum, rf3_keyspace, cassandra_cluster  # noqa: F401 (fixtures)
from telemetry_conformance import (GATEWAY_COMMANDS, Board, GatewayUnderTest, Stream, TimedWriter,
                                   assert_each_frame_once, stored_frames, utc_days_around_now, wait_for)

pytestmark = pytest.mark.cassandra

RATE = 100  # frames/s per gateway: the two gateways and three nodes share 2 cores
HOUR_MS = 3_600_000


def total(gateway: GatewayUnderTest, name: str, **labels: str) -> float:
    """A metric summed over its other labels."""
    wanted = set(labels.items())
    return sum(v for (sample, sample_labels), v in gateway.metrics_or_none().items()
               if sample == name and wanted <= set(sample_labels))


def errors_by_kind(gateway: GatewayUnderTest) -> dict[str, float]:
    return {dict(labels)["error"]: value for (sample, labels), value in gateway.metrics_or_none().items()
            if sample == "telemetry_gateway_write_errors_total" and value}


def written(gateway: GatewayUnderTest) -> float:
    return gateway.metric("telemetry_gateway_rows_written_total")


@pytest.fixture
def gateways(tmp_path, rf3_keyspace, cassandra_cluster, monkeypatch):
    """One gateway per implementation, each with its own board, spool and source, on the same keyspace."""
    started = {}
    for name, command in GATEWAY_COMMANDS.items():
        folder = tmp_path / name
        folder.mkdir()
        board = Board(folder / "ttyUSB0")
        gateway = GatewayUnderTest.configure(folder, [board.link], rf3_keyspace, cassandra_cluster,
                                             consistency="LOCAL_QUORUM")
        monkeypatch.setenv("GATEWAY_COMMAND", shlex.join(command))
        gateway.start()
        gateway.board, gateway.pid = board, gateway.process.pid
        started[name] = gateway
    yield started
    for gateway in started.values():
        if gateway.process.poll() is None:
            gateway.kill()


def test_frames_survive_two_of_three_nodes_dying(gateways, rf3_keyspace, cassandra_cluster):
    t_base = int(time.time() * 1000) - HOUR_MS
    writers = {name: TimedWriter(g.board, Stream(f"cluster-{name}"), rate=RATE, t_base_ms=t_base)
               for name, g in gateways.items()}
    for writer in writers.values():
        writer.start()
    seen = {}
    try:
        wait_for(lambda: all(written(g) >= 2 * RATE * 3 for g in gateways.values()), 60, "frames written by both")

        node(2, "kill")
        # One node down: LOCAL_QUORUM (2 of 3) still holds, writes go on.
        before = {name: written(g) for name, g in gateways.items()}
        wait_for(lambda: all(written(g) >= before[n] + 3 * RATE * 3 for n, g in gateways.items()), 60,
                 "writes going on with node 2 down")

        node(3, "kill")
        # One of three left: no quorum. Writes fail, the spools grow, the boards keep sending.
        errors = {name: total(g, "telemetry_gateway_write_errors_total") for name, g in gateways.items()}
        wait_for(lambda: all(total(g, "telemetry_gateway_write_errors_total") > errors[n]
                             for n, g in gateways.items()), 60, "both gateways to see writes fail")
        # Seconds of frames held back (and no quorum until node 3 answers again, below).
        wait_for(lambda: all(g.metric("telemetry_gateway_spool_frames") > 3 * RATE for g in gateways.values()), 60,
                 "the spools to hold frames back without quorum")
        seen["spooled without quorum"] = {name: g.metric("telemetry_gateway_spool_frames")
                                          for name, g in gateways.items()}
        seen["errors without quorum"] = {name: errors_by_kind(g) for name, g in gateways.items()}

        node(3, "start")  # quorum again (nodes 1 and 3): the spools drain while frames keep coming
        wait_for(lambda: all(g.metric("telemetry_gateway_spool_frames") < RATE for g in gateways.values()), 120,
                 "the spools to drain after node 3 came back")
        node(2, "start")
        before = {name: written(g) for name, g in gateways.items()}
        wait_for(lambda: all(written(g) >= before[n] + 3 * RATE for n, g in gateways.items()), 60,
                 "frames written with all three nodes up again")
    finally:
        sent = {name: writer.finish() for name, writer in writers.items()}

    for name, gateway in gateways.items():
        wait_for(lambda: total(gateway, "telemetry_gateway_frames_accepted_total") == len(sent[name])
                 and gateway.metric("telemetry_gateway_spool_frames") == 0, 120,
                 f"every frame read and acknowledged by the {name} gateway")

    cluster = connect_cluster(cassandra_cluster)  # QUORUM, opened after the faults
    try:
        session = cluster.connect(rf3_keyspace)
        for name, writer in writers.items():
            numbers = {n for n, _, _ in sent[name]}
            stored = stored_frames(session, writer.stream.source, utc_days_around_now())
            assert_each_frame_once(stored, numbers, writer, name)
            print(f"{name}: sent {len(numbers)}, stored {len(stored)} once each (allowed loss: 0); "
                  f"{seen['spooled without quorum'][name]:.0f} frames spooled without quorum; failed writes, retried: "
                  f"{errors_by_kind(gateways[name])} ({seen['errors without quorum'][name]} while without quorum)")
    finally:
        cluster.shutdown()

    for name, gateway in gateways.items():
        assert seen["spooled without quorum"][name] > RATE, f"{name}: the outage did not hold frames back"
        # Without quorum the coordinator refuses (unavailable) or, while it still takes the dead nodes for alive,
        # waits for them in vain (timeout): either way the write failed, was counted, and was retried.
        without_quorum = seen["errors without quorum"][name]
        assert without_quorum.keys() <= {"unavailable", "timeout"} and sum(without_quorum.values()) > errors[name], (
            f"{name}: write errors without quorum {without_quorum}")
        assert gateway.process.poll() is None and gateway.process.pid == gateway.pid, f"{name} restarted"
        assert gateway.stop() == 0
        assert "Traceback" not in gateway.log(), gateway.log()[-3000:]
