"""Gateway conformance under real faults: a device unplugged and back ten times, the spool's disk really full
(ENOSPC from a small tmpfs); the gateway SIGKILLed at random moments is test_gateway_sigkill.py, which uses the
bound and the row check here. Every check is row by row: each frame's every metric value and timestamp, each frame
at most once, and nothing missing beyond the loss the README's table allows for that fault (stated in each test)."""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass

import pytest

from conftest import fill_disk
from telemetry_conformance import (Board, GatewayUnderTest, PacedWriter, Stream, stored_frames, utc_days_around_now,
                                   wait_for)
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace  # noqa: F401 (fixtures)

pytestmark = pytest.mark.cassandra

RESERVE_BYTES = 1 << 20  # spool.md, Full disk: the reserve file beside the spool

HOUR_MS = 3_600_000


@dataclass(frozen=True)
class Kill:
    """A SIGKILL as the test saw it: wall-clock ms and monotonic s just before the signal, and monotonic s once the
    process was reaped. The process died somewhere between: it may have read frames written up to dead_at (the
    test's own threads run on between the clock reading and the signal)."""
    ms: int
    at: float
    dead_at: float


def sigkill(gateway) -> Kill:
    ms, at = int(time.time() * 1000), time.monotonic()
    gateway.kill()
    return Kill(ms, at, time.monotonic())


def lost_on_gateway_clock(stored, writer: PacedWriter, kills: list[Kill], window_ms: int) -> set[int]:
    """The frames a gateway SIGKILLed at kills may have lost. A frame may be missing only if the dead process read
    it within window_ms before the kill, judged on the gateway's own clock: after the last frame it stamped on
    receipt (odd frames) at or before kill - window_ms; and only if it had reached the pty before the process was
    dead (frames are read in order). Receipt stamps after a crash can run late (spool.md, ceilings), never early,
    so the bound is never stricter than the truth."""
    stamped = sorted((n, entries[0][0]) for n, entries in stored.items() if n % 2 == 1)
    allowed: set[int] = set()
    for kill in kills:
        low = max((n for n, ts in stamped if ts <= kill.ms - window_ms), default=0)
        high = min((n for n, at in writer.started.items() if at > kill.dead_at), default=max(writer.started) + 1)
        allowed |= set(range(low + 1, high))
    return allowed


def check_rows(session, writer: PacedWriter, sent, may_be_missing=frozenset(), timeout: float = 120, who: str = "",
               late_ms: int = 60_000):
    """Every sent frame but those in may_be_missing (a set, or a function of the stored frames giving it) is stored
    exactly once, with its exact values; even frames at their explicit t, odd ones at a receipt stamp after they
    were sent (at most late_ms after), strictly increasing. Failures start with who (the gateway), if given. Returns
    the stored frames."""
    who = f"{who}: " if who else ""
    allowed = may_be_missing if callable(may_be_missing) else lambda _stored: set(may_be_missing)
    every = {n for n, _, _ in sent}

    def landed():
        frames = stored_frames(session, writer.stream.source, utc_days_around_now())
        return frames if every - allowed(frames) <= frames.keys() else None
    try:
        stored = wait_for(landed, timeout, f"the frames of {writer.stream.source} in Cassandra", interval=0.5)
    except AssertionError as error:
        frames = stored_frames(session, writer.stream.source, utc_days_around_now())
        missing = sorted(every - allowed(frames) - frames.keys())
        times = {n: (round(writer.started.get(n, 0), 3), round(at, 3)) for n, at, _ in sent if n in missing[:20]}
        raise AssertionError(f"{who}{error}: {len(missing)} missing, first {missing[:20]}; (write started, ended) "
                             f"monotonic: {times}") from None
    # A read pages through the partition metric by metric: a frame written meanwhile can show in a later page and
    # not in an earlier one, i.e. look half-stored. Read again until two reads agree: nothing is being written.
    deadline = time.monotonic() + timeout
    while True:
        time.sleep(0.5)
        again = stored_frames(session, writer.stream.source, utc_days_around_now())
        if again == stored:
            break
        assert time.monotonic() < deadline, f"{who}the rows kept changing"
        stored = again
    assert stored.keys() <= every, f"{who}frames that were never sent: {stored.keys() - every}"
    missing = every - stored.keys()
    assert missing <= allowed(stored), f"{who}lost beyond the bound: {sorted(missing - allowed(stored))[:20]}"
    # when its first byte went to the pty, on the wall clock: the writer notes the time after the write, which a
    # busy machine can delay
    sent_ms = {n: wall_ms - round(1000 * (at - writer.started.get(n, at))) for n, at, wall_ms in sent}
    previous_stamp = 0
    for n in sorted(stored):
        assert len(stored[n]) == 1, f"{who}frame {n} stored {len(stored[n])} times: {stored[n]}"
        ts, values = stored[n][0]
        assert values == writer.expected_values(n), f"{who}frame {n}"
        if n % 2 == 0:
            assert ts == writer.t_base_ms + n, f"{who}frame {n}: ts {ts}, sent with t={writer.t_base_ms + n}"
        else:
            # stamped when read: after its first byte was written, within the minute (late_ms)
            assert sent_ms[n] - 50 <= ts <= sent_ms[n] + late_ms, f"{who}frame {n}: ts {ts}, sent at {sent_ms[n]}"
            assert ts > previous_stamp, f"{who}frame {n}: receipt stamps must increase"
            previous_stamp = ts
    return stored


def test_ten_unplugs_lose_nothing_sent_after_each_replug(tmp_path, keyspace, cassandra_node, db, gateways):
    """A USB adapter unplugged and plugged back ten times, frames sent the moment the device is back (before the
    gateway has reopened it). Allowed loss: none (nothing is sent while unplugged here; a real board's frames
    then are lost, and the README says so)."""
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], keyspace, cassandra_node)
    gateways.append(gateway)
    gateway.start()
    stream = Stream("U")
    writer = PacedWriter(board, stream, rate=0, t_base_ms=int(time.time() * 1000) - HOUR_MS)  # not started
    sent, n = [], 0
    for cycle in range(10):
        board.unplug()
        wait_for(lambda: gateway.metric("telemetry_gateway_input_up", input=str(board.link)) == 0, 10, "input down")
        time.sleep(random.uniform(0.0, 0.5))
        board = Board(board.link)
        replugged = time.monotonic()
        for _ in range(5):
            n += 1
            board.write(writer.frame(n))
            sent.append((n, time.monotonic(), int(time.time() * 1000)))
        wait_for(lambda: gateway.metric("telemetry_gateway_input_up", input=str(board.link)) == 1, 10, "input up")
        reopened_s = time.monotonic() - replugged
        assert reopened_s < 1.0, f"cycle {cycle}: the port was reopened {reopened_s:.2f} s after the device came back"
    check_rows(db, writer, sent)
    assert gateway.process.poll() is None
    assert gateway.stop() == 0


def test_a_really_full_disk_pauses_reading_and_loses_nothing(tmp_path, keyspace, cassandra_node, db, gateways,
                                                            small_tmpfs):
    """The spool's disk fills up for real while Cassandra is unreachable: reading pauses (metric, log line) with
    nothing held in memory, SIGTERM exits 0 with nothing lost, a gateway restarted on the disk kept full drains the
    spool to Cassandra and gives the drained spool's room back, and reading resumes in that room, the rest of the
    disk still full. Allowed loss: none (frames wait in the pty meanwhile)."""
    board = Board(tmp_path / "ttyUSB0")
    gateway = GatewayUnderTest.configure(tmp_path, [board.link], keyspace, cassandra_node,
                                         spool=small_tmpfs / "spool.sqlite")
    gateways.append(gateway)
    gateway.start(TELEMETRY_CASSANDRA_PORT="1")  # nothing listens there: every frame stays spooled
    writer = PacedWriter(board, Stream("D"), rate=400, t_base_ms=int(time.time() * 1000) - HOUR_MS)
    writer.start()
    wait_for(lambda: gateway.metric("telemetry_gateway_spool_frames") >= 500, 30, "frames in the spool")
    filler = fill_disk(small_tmpfs)
    # the gateway gives back room on a low disk (its WAL): the disk is kept full meanwhile
    wait_for(lambda: fill_disk(small_tmpfs) and gateway.metric("telemetry_gateway_reading_paused") == 1, 60,
             "reading paused")
    assert gateway.metric("telemetry_gateway_spool_full_total", kind="disk") == 1
    assert gateway.metric("telemetry_gateway_spool_holding") == 0  # Cassandra away: every frame committed at once
    paused_at = gateway.metric("telemetry_gateway_lines_read_total", input=str(board.link))
    time.sleep(2)
    assert gateway.metric("telemetry_gateway_lines_read_total", input=str(board.link)) == paused_at
    assert gateway.stop() == 0
    log = gateway.log()
    assert log.count("event=spool_full ") == 1 and "Traceback" not in log
    assert "shutdown_with_unspooled_frames" not in log and log.splitlines()[-1].endswith("lost_frames=0"), log[-2000:]

    gateway.start()  # the right port, the disk still full
    wait_for(lambda: gateway.metric("telemetry_gateway_frames_written_total") > 0
             and (gateway.metric("telemetry_gateway_spool_frames") == 0
                  or gateway.metric("telemetry_gateway_reading_paused") == 0), 60, "the spool drained")
    if gateway.metric("telemetry_gateway_reading_paused") == 1:
        # The drained spool's own pages did not make room for the reserve (the filler took it): free just what the
        # reserve needs, not the margin a spool holding frames asks for.
        os.truncate(filler, filler.stat().st_size - RESERVE_BYTES - (64 << 10))
    wait_for(lambda: gateway.metric("telemetry_gateway_reading_paused") == 0, 10, "reading resumed")
    assert "event=spool_room_again kind=disk spooled_frames=0 " in gateway.log()  # it waited for the drain
    time.sleep(1)
    sent = writer.finish()
    check_rows(db, writer, sent)
    assert gateway.stop() == 0
    filler.unlink()
    assert "Traceback" not in gateway.log()
