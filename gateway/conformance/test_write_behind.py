"""The deferred spool policy (the default: gateway/contract/spool.md, "`deferred` in detail") against the real
Cassandra: frames Cassandra acknowledges in time never reach the spool file; frames it does not are committed once
due, survive a SIGKILL and are sent exactly once after the restart. (A SIGKILL with Cassandra up, where deferred
may lose the last fsync_interval_ms of unacknowledged frames, is test_gateway_sigkill.py.)"""

from __future__ import annotations

import time

import pytest

from telemetry_conformance import Board, GatewayUnderTest, PacedWriter, Stream, wait_for
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace  # noqa: F401 (fixtures)
from test_faults import HOUR_MS, check_rows

pytestmark = pytest.mark.cassandra

COMMITTED = "telemetry_gateway_spool_frames_committed_total"


def test_frames_acknowledged_in_time_never_reach_the_spool_file(tmp_path, keyspace, cassandra_node, db, gateways):
    """300 frames at 100 frames/s with Cassandra up: every one lands exactly once, and not one was committed to
    the spool file. The hold is 5 s here, not the default 1 s, so a slow moment of a loaded test machine cannot
    make a frame due; what the default writes at a Pi's rate is deploy/pi/footprint's figure."""
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], keyspace, cassandra_node, fsync="deferred",
                                         fsync_interval_ms=5000)
    gateways.append(gateway)
    gateway.start()
    gateway.wait_holding()
    writer = PacedWriter(board, Stream("W"), rate=100, t_base_ms=int(time.time() * 1000) - HOUR_MS)
    writer.start()
    time.sleep(3.0)
    sent = writer.finish()
    check_rows(db, writer, sent)
    assert gateway.metric("telemetry_gateway_frames_accepted_total", format="v1") == len(sent)
    assert gateway.metric(COMMITTED) == 0
    assert gateway.spool_depth() == 0
    assert gateway.stop() == 0
    assert gateway.spool_depth() == 0  # nothing was held at the stop: all acknowledged
    assert "unclean_stop_detected" not in gateway.log()


def test_frames_not_acknowledged_in_time_are_committed_and_survive_a_sigkill(tmp_path, keyspace, cassandra_node,
                                                                            db, gateways):
    """Cassandra unreachable: holding is not safe, so each frame is committed at once (spool_frames_committed_total
    counts every one, the file holds every one, spool_holding is 0). SIGKILL, restart with Cassandra reachable:
    every frame lands exactly once with its exact values and timestamps (nothing lost), and the restart logs the
    unclean stop."""
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], keyspace, cassandra_node)  # the default policy
    gateways.append(gateway)
    gateway.start(TELEMETRY_CASSANDRA_PORT="1")  # nothing listens there: no acknowledgement
    writer = PacedWriter(board, Stream("U"), rate=100, t_base_ms=int(time.time() * 1000) - HOUR_MS)
    writer.start()
    time.sleep(2.0)
    sent = writer.finish()
    wait_for(lambda: gateway.metric(COMMITTED) == len(sent), 30, f"{len(sent)} frames committed")
    assert gateway.metric("telemetry_gateway_spool_holding") == 0
    assert gateway.spooled_numbers() == {n for n, _, _ in sent}
    gateway.kill()
    gateway.start()
    check_rows(db, writer, sent)
    assert "unclean_stop_detected" in gateway.log()
    assert gateway.stop() == 0
    assert gateway.spool_depth() == 0
