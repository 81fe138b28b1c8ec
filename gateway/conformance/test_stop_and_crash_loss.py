"""What a stop or a crash may cost, at the default policy (gateway/contract/spool.md: "Held only while holding is
safe", "Every stop keeps what was read", "Seqs across a restart"), each row checked: every value and timestamp.

- The ingest stage fails for real (the contract's failpoint) while frames are held: the stop commits them, exits 1,
  says lost_frames=0, and after the restart every frame lands exactly once. Allowed loss: none.
- Cassandra unreachable, then a SIGKILL: nothing was held, so the loss is what batch loses, bounded here on the
  gateway's own clock (its receipt stamps) by LOSS_WINDOW_MS, half the hold.
- Cassandra hung (a proxy that stops answering: the shared node is not stopped), then a SIGKILL: frames are held
  until due, then committed, so the loss is bounded by
  the hold (fsync_interval_ms, 1 s by default) on the gateway's clock.
(Seq gaps across a restart: test_seq_gaps_restart.py.)"""

from __future__ import annotations

import time

import pytest

from telemetry_conformance import Board, GatewayUnderTest, PacedWriter, Stream, TimedWriter, assert_each_frame_once, \
    stored_frames, utc_days_around_now, wait_for
from telemetry_conformance.cassandra_proxy import CutProxy
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace  # noqa: F401 (fixtures)
from test_faults import HOUR_MS, check_rows, lost_on_gateway_clock, sigkill

pytestmark = pytest.mark.cassandra

LOSS_WINDOW_MS = 500  # half the default hold (fsync_interval_ms 1000): a gateway still holding would exceed it


def test_a_failed_ingest_stage_commits_what_it_held_and_loses_nothing(tmp_path, keyspace, cassandra_node, db,
                                                                      gateways):
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], keyspace, cassandra_node)
    gateways.append(gateway)
    gateway.start(TELEMETRY_GATEWAY_FAILPOINT="ingest_after_frames:300")
    writer = TimedWriter(board, Stream("F"), rate=0, t_base_ms=int(time.time() * 1000) - HOUR_MS)
    gateway.wait_holding()
    first = 300
    board.write(b"".join(writer.frame(n) for n in range(1, first + 1)))  # one burst: the last group is held
    assert gateway.process.wait(timeout=60) == 1
    log = gateway.log()
    assert "event=stage_died" in log and "stages=ingest" in log, log[-3000:]
    assert "lost_frames=0" in log.splitlines()[-1], log.splitlines()[-1]
    in_file = gateway.spooled_numbers()
    stored = stored_frames(db, "F", utc_days_around_now()).keys()
    assert set(range(1, first + 1)) <= in_file | stored, f"lost: {sorted(set(range(1, first + 1)) - in_file - stored)}"

    gateway.start()  # no failpoint: the spool drains, new frames follow
    board.write(b"".join(writer.frame(n) for n in range(first + 1, first + 101)))
    sent = set(range(1, first + 101))
    wait_for(lambda: stored_frames(db, "F", utc_days_around_now()).keys() >= sent, 60, "every frame stored",
             interval=0.5)
    assert_each_frame_once(stored_frames(db, "F", utc_days_around_now()), sent, writer)
    assert "unclean_stop_detected" not in gateway.log()  # the failed run still closed its spool
    assert gateway.stop() == 0


def test_cassandra_unreachable_then_sigkill_loses_no_more_than_batch(tmp_path, keyspace, cassandra_node, db,
                                                                     gateways):
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], keyspace, cassandra_node)
    gateways.append(gateway)
    gateway.start(TELEMETRY_CASSANDRA_PORT="1")  # nothing listens there
    writer = PacedWriter(board, Stream("O"), rate=200, t_base_ms=int(time.time() * 1000) - HOUR_MS)
    writer.start()
    time.sleep(2.0)
    assert gateway.metric("telemetry_gateway_spool_holding") == 0
    kill = sigkill(gateway)
    gateway.start()
    time.sleep(1.0)
    sent = writer.finish()
    stored = check_rows(db, writer, sent, lambda frames: lost_on_gateway_clock(frames, writer, [kill],
                                                                               LOSS_WINDOW_MS))
    print(f"sent {len(sent)}, stored {len(stored)}, lost {len(sent) - len(stored)} (Cassandra unreachable, SIGKILL)")
    assert gateway.stop() == 0


def test_cassandra_hung_then_sigkill_loses_at_most_the_hold(tmp_path, keyspace, cassandra_node, db, gateways):
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], keyspace, cassandra_node)
    gateways.append(gateway)
    proxy = CutProxy(cassandra_node)
    try:
        gateway.start(TELEMETRY_CASSANDRA_PORT=str(proxy.port))
        gateway.wait_holding()
        writer = PacedWriter(board, Stream("H"), rate=200, t_base_ms=int(time.time() * 1000) - HOUR_MS)
        writer.start()
        time.sleep(1.0)
        proxy.hang()  # Cassandra hangs: no answer, no error, until the driver's timeouts
        time.sleep(2.5)
        kill = sigkill(gateway)
        proxy.restore()
        gateway.start(TELEMETRY_CASSANDRA_PORT=str(proxy.port))
        time.sleep(1.0)
        sent = writer.finish()
        stored = check_rows(db, writer, sent, lambda frames: lost_on_gateway_clock(frames, writer, [kill], 1000))
        print(f"sent {len(sent)}, stored {len(stored)}, lost {len(sent) - len(stored)} (Cassandra hung, SIGKILL)")
        assert gateway.stop() == 0
    finally:
        proxy.close()
