"""Gateway conformance (gateway/contract/spool.md, "Seqs across a restart"): seq gaps across a restart are counted,
clean or not, and after a SIGKILL also as frames possibly lost. Exact. Every gateway under test, at each spool fsync
policy (the default and batch), runs side by side with a board, spool and source of its own, so that they all share
the wait for the seqs to be stored (up to 60 s under deferred, the default)."""

from __future__ import annotations

import time

import pytest

from telemetry_conformance import Stream, TimedWriter, assert_each_frame_once, stored_frames, utc_days_around_now, \
    wait_for
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace, side_by_side  # noqa: F401 (fixtures)
from test_faults import HOUR_MS

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test in each test, side by side
POLICIES = {"default": None, "batch": "batch"}  # tag -> spool fsync (None: the gateway's default)


def test_seq_gaps_across_a_restart_are_counted_and_after_a_crash_as_possibly_lost(db, side_by_side):
    rigs = {}
    for tag, fsync in POLICIES.items():
        for name, (board, gateway, start) in side_by_side(tag=tag, fsync=fsync).items():
            stream = Stream(f"S-{name}")
            writer = TimedWriter(board, stream, rate=0, t_base_ms=int(time.time() * 1000) - HOUR_MS)
            rigs[name] = (gateway, board, stream, writer, start)

    def start_all():
        for _, _, _, _, start in rigs.values():
            start()

    def send(numbers):
        for _, board, _, writer, _ in rigs.values():
            board.write(b"".join(writer.frame(n) for n in numbers))
        for name, (_, _, stream, _, _) in rigs.items():
            wait_for(lambda: stored_frames(db, stream.source, utc_days_around_now()).keys() >= set(numbers), 60,
                     f"{name}: frames up to {max(numbers)} stored", interval=0.3)

    start_all()
    send(range(1, 51))
    for name, (gateway, _, stream, _, _) in rigs.items():
        assert gateway.stop() == 0, name
        stream._seq += 7  # seven frames the board sent while no gateway read them: lost on the air
    start_all()
    send(range(51, 101))
    for name, (gateway, _, stream, _, _) in rigs.items():
        assert gateway.metric("telemetry_gateway_seq_missing_frames_total", source=stream.source) == 7, name
        assert gateway.metric("telemetry_gateway_frames_possibly_lost_total", source=stream.source) == 0, name

    # Every frame stored and acknowledged; the spool stores their seqs at once (batch) or within 60 s (deferred:
    # spool.md, a commit of their own once 60 s are up, the SD card's sake; these frames have explicit timestamps,
    # so no receipt-stamp ceiling commit comes earlier to take them along).
    for name, (gateway, _, stream, _, _) in rigs.items():
        last = (stream._seq - 1) % 65536
        wait_for(lambda: gateway.stored_seq(stream.source) == last, 62, f"{name}: seq {last} in source_seqs",
                 interval=0.5)
    for gateway, _, stream, _, _ in rigs.values():
        gateway.kill()
        stream._seq += 11
    start_all()
    send(range(101, 151))
    for name, (gateway, _, stream, writer, _) in rigs.items():
        assert gateway.metric("telemetry_gateway_seq_missing_frames_total", source=stream.source) == 11, name
        assert gateway.metric("telemetry_gateway_frames_possibly_lost_total", source=stream.source) == 11, name
        log = gateway.log()
        assert "event=unclean_stop_detected" in log and "sources=1" in log, name
        assert "event=frames_possibly_lost" in log and "missing=11" in log, name
        assert_each_frame_once(stored_frames(db, stream.source, utc_days_around_now()), set(range(1, 151)), writer,
                               who=name)
        assert gateway.stop() == 0, f"{name}: a clean stop"
