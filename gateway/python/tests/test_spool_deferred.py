"""The deferred (write-behind) spool policy on a real file (gateway/contract/spool.md, "`deferred` in detail"), and
its pure parts: held frames and receipt-stamp ceilings. Time is passed in (now=...), never slept."""

import sqlite3
import time

import pytest

from telemetry_gateway.config import Config
from telemetry_gateway.spool.held_frames import HeldFrames
from telemetry_gateway.ingest import RESUME_RETRY_S, RESUME_WAIT_S, Ingest
from telemetry_gateway.metrics import Metrics
from telemetry_gateway.spool.receipt_ceilings import LEAD_MS, MARGIN_MS, ReceiptCeilings
from telemetry_gateway.spool.safe_seqs import ROWS_ALONE_S, ROWS_INTERVAL_S
from telemetry_gateway.spool import NewFrame, Spool, SpooledFrame


def frames(n, start=0, source="G"):
    return [NewFrame.of(source, 1_000 + i, 2_000 + i, (("temp_in", i + 0.5), ("light", float(i))))
            for i in range(start, start + n)]


def rows_in_file(path):
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT id FROM frames ORDER BY id")]


def stored_stamps(path):
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT source, last_ts_ms FROM receipt_stamps"))


def deferred(path, hold_ms=200, link_ok=True, wall=None):
    """A deferred spool whose sender is connected and writing (holding is safe), unless link_ok is False; its wall
    clock is wall["ms"] (default: 0)."""
    wall = {"ms": 0} if wall is None else wall
    spool = Spool(path, fsync="deferred", hold_ms=hold_ms, wall_ms=lambda: wall["ms"])
    spool.set_link(link_ok, True)
    return spool


def test_frames_acknowledged_in_time_never_reach_the_file(tmp_path):
    path = tmp_path / "s.sqlite"
    spool = deferred(path)
    wal = path.with_name(path.name + "-wal")
    size = wal.stat().st_size  # the tables made at open; no checkpoint runs here, so a commit would grow it
    assert spool.commit(frames(5), [], now=10.0) == 0
    taken = spool.take(0, 10)
    assert [f.ts_ms for f in taken] == [1000, 1001, 1002, 1003, 1004]
    assert spool.depth == 5
    assert spool.commit([], [(taken[0].id, taken[-1].id)], now=10.1) == 0
    assert spool.depth == 0
    assert spool.commit([], [], now=11.0) == 0  # nothing due: nothing written
    assert rows_in_file(path) == []
    assert wal.stat().st_size == size  # not one page written
    spool.close()


def test_a_frame_not_acknowledged_in_time_is_committed_with_its_id_and_survives(tmp_path):
    path = tmp_path / "s.sqlite"
    spool = deferred(path)
    spool.commit(frames(3), [], now=10.0)
    ids = [f.id for f in spool.take(0, 10)]
    assert spool.flush_delay_ms(now=10.19) > 0
    assert spool.flush_delay_ms(now=10.21) == 0
    assert spool.commit([], [(ids[0], ids[0])], now=10.21) == 2  # the first was acknowledged in time
    assert rows_in_file(path) == ids[1:]
    assert [f.id for f in spool.take(0, 10)] == ids[1:]  # now from the file, each once
    spool.commit([], [(ids[1], ids[1])], now=10.3)  # a late acknowledgement deletes it
    assert rows_in_file(path) == ids[2:]
    crashed_copy = tmp_path / "copy.sqlite"
    with sqlite3.connect(path) as db, sqlite3.connect(crashed_copy) as copy:
        db.backup(copy)
    after = deferred(crashed_copy)
    assert [(f.id, f.ts_ms) for f in after.take(0, 10)] == [(ids[2], 1002)]
    after.commit(frames(1, start=7), [], now=20.0)
    assert after.take(ids[2], 10)[0].id == ids[2] + 1  # ids go on above the committed ones


def test_take_merges_held_and_committed_frames_in_id_order(tmp_path):
    spool = deferred(tmp_path / "s.sqlite")
    spool.commit(frames(4), [], now=0.0)
    spool.commit([], [], now=1.0)  # all four committed
    spool.commit(frames(3, start=4), [], now=1.0)  # three held
    taken = spool.take(0, 100)
    assert [f.ts_ms for f in taken] == list(range(1000, 1007))
    assert [f.id for f in taken] == sorted({f.id for f in taken})
    assert [f.ts_ms for f in spool.take(taken[2].id, 3)] == [1003, 1004, 1005]
    assert [f.ts_ms for f in spool.take(taken[5].id, 3)] == [1006]


def test_ids_continue_above_the_sequence_after_a_reopen(tmp_path):
    path = tmp_path / "s.sqlite"
    batch = Spool(path)  # another policy's frames, all acknowledged: the table is empty, the sequence is not
    batch.commit(frames(5), [])
    batch.commit([], [(1, 5)])
    batch.close()
    spool = deferred(path)
    spool.commit(frames(1), [], now=0.0)
    assert spool.take(0, 10)[0].id == 6


def test_more_than_the_bound_held_commits_the_oldest_at_once(tmp_path):
    path = tmp_path / "s.sqlite"
    spool = deferred(path, hold_ms=60_000)
    spool.commit(frames(5003), [], now=0.0)
    assert spool.commit([], [], now=0.001) == 3
    assert rows_in_file(path) == [1, 2, 3]
    assert spool.depth == 5003


def test_a_clean_stop_commits_what_is_held_and_the_real_stamps(tmp_path):
    path = tmp_path / "s.sqlite"
    spool = deferred(path, wall={"ms": 50_000})  # stamps on time
    spool.last_receipt_stamps()
    spool.commit(frames(2), [], {"G": 50_000}, now=0.0)
    assert stored_stamps(path) == {"G": 50_000 + LEAD_MS}  # a ceiling, committed before the frames counted
    assert spool.commit([], [], {}, now=0.01, final=True) == 2
    spool.close()
    assert rows_in_file(path) == [1, 2]
    assert stored_stamps(path) == {"G": 50_000}


def test_stamps_below_their_ceiling_write_nothing(tmp_path):
    path = tmp_path / "s.sqlite"
    wall = {"ms": 10_000}  # stamps on time
    spool = deferred(path, wall=wall)
    spool.commit([], [], {"G": 10_000, "H": 10_000}, now=0.0)
    assert stored_stamps(path) == {"G": 10_000 + LEAD_MS, "H": 10_000 + LEAD_MS}
    wal = path.with_name(path.name + "-wal")
    size = wal.stat().st_size
    spool.commit([], [], {"G": 9_000 + LEAD_MS}, now=0.0)
    assert wal.stat().st_size == size  # no transaction at all
    wall["ms"] = 10_001 + LEAD_MS
    spool.commit([], [], {"G": 10_001 + LEAD_MS}, now=0.0)  # past G's ceiling; H's is not near its last stamp
    assert stored_stamps(path) == {"G": 10_001 + 2 * LEAD_MS, "H": 10_000 + LEAD_MS}


def test_a_ceiling_commit_adds_one_page_to_the_wal(tmp_path):
    """A receipt_stamps row is updated in place: its table's page goes into the WAL, not its index's too."""
    path = tmp_path / "s.sqlite"
    wall = {"ms": 10_000}  # stamps on time
    spool = deferred(path, wall=wall)
    spool.commit([], [], {"G": 10_000, "H": 10_000}, now=0.0)
    wal = path.with_name(path.name + "-wal")
    size = wal.stat().st_size
    wall["ms"] = 10_001 + LEAD_MS
    spool.commit([], [], {"G": 10_001 + LEAD_MS}, now=0.0)
    assert stored_stamps(path) == {"G": 10_001 + 2 * LEAD_MS, "H": 10_000 + LEAD_MS}
    assert wal.stat().st_size - size == 24 + spool._store.page_size  # one WAL frame: its header and one page
    spool.close()


def stored_seqs(path):
    with sqlite3.connect(path) as db:
        return {source: (seq, ts_ms) for source, seq, ts_ms in db.execute("SELECT source, seq, ts_ms FROM source_seqs")}


def test_seq_rows_ride_with_a_commit_made_anyway_and_go_alone_only_later(tmp_path):
    path = tmp_path / "s.sqlite"
    deferred(path).close()
    with sqlite3.connect(path) as db:  # G has a stored row (a source without one: the next test)
        db.execute("INSERT INTO source_seqs (source, seq, ts_ms) VALUES ('G', 0, 999)")
    db.close()
    spool = deferred(path)
    t0 = time.monotonic()  # after the open, which counts as the last write of rows
    spool.commit(frames(1), [], {"G": 10_000}, now=t0, seqs={"G": (1, 1_000)})  # held, and a ceiling
    [held] = spool.take(0, 10)
    spool.commit([], [(held.id, held.id)], now=t0 + 0.1)  # acknowledged: its row is writable
    assert stored_seqs(path) == {"G": (0, 999)}
    assert spool.flush_delay_ms(t0 + 0.1) <= (ROWS_ALONE_S - 0.1) * 1000
    assert spool.flush_delay_ms(t0 + 0.1) > ROWS_INTERVAL_S * 1000
    spool.commit([], [], now=t0 + ROWS_INTERVAL_S)  # old enough to ride, but no commit is made anyway
    assert stored_seqs(path) == {"G": (0, 999)}
    t1 = t0 + ROWS_INTERVAL_S + 0.1
    spool.commit([], [], {"G": 10_001 + LEAD_MS}, now=t1)  # a ceiling commit: the row rides with it
    assert stored_seqs(path) == {"G": (1, 1_000)}
    spool.commit(frames(1, 1), [], now=t1, seqs={"G": (2, 1_001)})
    [held] = spool.take(held.id, 10)
    spool.commit([], [(held.id, held.id)], now=t1 + 0.1)
    assert spool.flush_delay_ms(t1 + 0.1) == pytest.approx((ROWS_ALONE_S - 0.1) * 1000)
    spool.commit([], [], now=t1 + ROWS_ALONE_S)  # a commit of its own
    assert stored_seqs(path) == {"G": (2, 1_001)}
    assert spool.flush_delay_ms(t1 + ROWS_ALONE_S) is None
    spool.close()


def test_a_source_without_a_stored_seq_row_gets_one_as_soon_as_its_frame_is_safe(tmp_path):
    """A crash in a new source's first minute must leave a row to count its possibly lost frames from: one small
    write for each new source, then the usual interval."""
    path = tmp_path / "s.sqlite"
    spool = deferred(path)
    t0 = time.monotonic()
    spool.commit(frames(1), [], {"G": 10_000}, now=t0, seqs={"G": (1, 1_000)})  # held (and a ceiling commit)
    assert stored_seqs(path) == {}  # not safe yet
    [held] = spool.take(0, 10)
    assert spool.flush_delay_ms(t0) > 0
    spool.commit([], [(held.id, held.id)], now=t0 + 0.1)  # acknowledged: written at once, a commit of its own
    assert stored_seqs(path) == {"G": (1, 1_000)}
    spool.commit(frames(1, 1), [], now=t0 + 0.2, seqs={"G": (2, 1_001)})
    [held] = spool.take(held.id, 10)
    spool.commit([], [(held.id, held.id)], now=t0 + 0.3)
    assert stored_seqs(path) == {"G": (1, 1_000)}  # G has its row now: the next waits for the interval
    assert spool.flush_delay_ms(t0 + 0.3) == pytest.approx((ROWS_ALONE_S - 0.2) * 1000)
    spool.close()



def test_an_unclean_stop_is_noticed_at_the_next_open(tmp_path):
    path = tmp_path / "s.sqlite"
    spool = deferred(path)
    assert not spool.unclean_stop
    spool.commit(frames(1), [], now=0.0)
    spool.commit([], [], now=1.0)
    crashed = tmp_path / "crashed.sqlite"  # what a SIGKILL leaves: the database and its WAL
    for suffix in ("", "-wal"):
        (tmp_path / f"crashed.sqlite{suffix}").write_bytes((tmp_path / f"s.sqlite{suffix}").read_bytes())
    spool.close()
    assert not deferred(path).unclean_stop
    assert deferred(crashed).unclean_stop


def test_acknowledgements_that_empty_the_file_let_the_same_commits_new_frames_be_held(tmp_path):
    """On a serial port acknowledgements ride with the next read's frames: holding is judged after the deletes of
    that commit, else the file would never be empty as of a commit while frames keep coming."""
    path = tmp_path / "s.sqlite"
    spool = deferred(path, link_ok=False)
    spool.commit(frames(3), [], now=0.0)  # not connected: committed
    spool.set_link(True, True)
    assert rows_in_file(path) == [1, 2, 3] and not spool.holding
    assert not spool.resuming  # the sender has not taken them yet
    assert [f.id for f in spool.take(0, 10)] == [1, 2, 3]
    assert spool.resuming
    assert not spool.emptied_by([(1, 2)]) and spool.emptied_by([(1, 2), (2, 2), (3, 3)])
    assert spool.commit(frames(1, start=3), [(1, 2)], now=0.1) == 1  # 3 is still in the file: committed
    assert rows_in_file(path) == [3, 4] and not spool.holding
    spool.take(3, 10)
    assert spool.commit(frames(2, start=4), [(3, 4)], now=0.2) == 0  # the deletes empty the file: held
    assert rows_in_file(path) == [] and spool.holding and not spool.resuming
    assert [f.id for f in spool.take(4, 10)] == [5, 6]
    spool.close()


def test_no_resuming_while_the_link_fails_or_something_is_held(tmp_path):
    path = tmp_path / "s.sqlite"
    spool = deferred(path, link_ok=False)
    spool.commit(frames(2), [], now=0.0)
    spool.take(0, 10)
    assert not spool.resuming
    assert spool.commit(frames(1, start=2), [(1, 2)], now=0.1) == 1  # not connected: committed all the same
    assert rows_in_file(path) == [3]
    spool.close()


def resuming_ingest(tmp_path):
    """An ingest over a deferred spool whose file holds two frames, both taken by the sender (in flight)."""
    spool = deferred(tmp_path / "s.sqlite", link_ok=False)
    spool.commit(frames(2), [], now=0.0)
    spool.set_link(True, True)
    spool.take(0, 10)
    return Ingest(Config(), spool, Metrics(), lambda: None), spool


def test_new_frames_wait_for_the_acknowledgements_that_empty_the_file(tmp_path):
    ingest, spool = resuming_ingest(tmp_path)
    ingest._ack_arrived.set()  # as if one had arrived: the wait returns at once
    assert ingest._await_acks(10.0, [(1, 1)])  # 2 is still in flight: wait
    assert ingest._acked == [(1, 1)]  # kept for the next turn
    assert not ingest._await_acks(10.01, [(1, 1), (2, 2)])  # these empty the file: commit now
    new = [NewFrame.of("G", 5_000, 5_000, (("temp_in", 1.0),))]
    assert ingest._commit(new, [(1, 1), (2, 2)], {}, stopping=False)
    assert spool.holding and spool.file_frames == 0 and spool.held_frames == 1
    spool.close()


def test_new_frames_wait_no_longer_than_resume_wait_s_then_not_again_for_a_while(tmp_path):
    ingest, spool = resuming_ingest(tmp_path)
    ingest._ack_arrived.set()
    assert ingest._await_acks(10.0, [])
    assert not ingest._await_acks(10.0 + RESUME_WAIT_S, [])  # too slow: committed as they come
    assert not ingest._await_acks(10.0 + RESUME_WAIT_S + 0.01, [])
    assert ingest._await_acks(10.0 + RESUME_WAIT_S + RESUME_RETRY_S, [])  # tried again
    spool.close()


def frame(frame_id):
    return SpooledFrame(frame_id, "G", frame_id, frame_id, "t", b"\0" * 8)


def test_held_frames_acknowledge_says_whether_the_file_has_some_of_the_range():
    held = HeldFrames(hold_s=0.2)
    held.hold([frame(i) for i in range(10, 15)], now=0.0)
    assert held.acknowledge(10, 12) is False
    assert held.acknowledge(5, 13) is True  # 5..9 were never held: committed by an earlier run
    assert [f.id for f in held.take(0, 10)] == [14]
    assert held.due(now=0.1) == []
    assert [f.id for f in held.due(now=0.25)] == [14]
    held.committed(held.due(now=0.25))
    assert len(held) == 0 and not held.is_due(now=5.0)


def test_held_frames_take_walks_back_only_over_new_frames():
    held = HeldFrames(hold_s=1.0)
    held.hold([frame(i) for i in range(1, 1001)], now=0.0)
    assert [f.id for f in held.take(997, 10)] == [998, 999, 1000]
    assert [f.id for f in held.take(0, 2)] == [1, 2]


def test_ceilings_are_written_ahead_and_refreshed_together():
    """Stamps on time (each stamp is the clock when it was given)."""
    ceilings = ReceiptCeilings({"G": 9_000}, max_sources=10)
    assert ceilings.rows_for({"G": 8_000}, now_ms=8_000) == {}  # below the stored stamp
    ceilings.stored({"G": 8_000}, {})
    assert ceilings.rows_for({"G": 9_500}, now_ms=9_500) == {"G": 9_500 + LEAD_MS}
    ceilings.stored({"G": 9_500}, {"G": 9_500 + LEAD_MS})
    ceilings.stored({"H": 9_600}, ceilings.rows_for({"H": 9_600}, now_ms=9_600))  # a new source: its ceiling alone
    assert ceilings.rows_for({"G": 40_000}, now_ms=40_000) == {}  # below its ceiling: no commit for it
    # A commit made anyway takes G along (within REFRESH_MS of its stamp), not H (its last stamp is older).
    assert ceilings.rows_for({"G": 40_000}, now_ms=40_000, along=True) == {"G": 40_000 + LEAD_MS}
    ceilings.stored({"G": 40_000}, {})
    h = 9_601 + LEAD_MS  # past H's ceiling: G's is near, raised with it
    assert ceilings.rows_for({"H": h}, now_ms=h) == {"H": h + LEAD_MS, "G": h + LEAD_MS}
    assert ceilings.final_rows({"H": h + 1}) == {"G": 40_000, "H": h + 1}


def run_late(ceilings, source, first_ts, start_ms, frames, step_ms, along_every=0):
    """Stamps on receipt for frames frames step_ms apart from the wall clock start_ms, the stamper continuing above
    first_ts (timestamps.Stamper: max(received, last + 1)), every commit done; along_every: every so many frames a
    commit is made anyway. Returns (the commits made for the stamps, the last stamp, the highest row written)."""
    commits, ts, highest = 0, first_ts, 0
    for n in range(frames):
        now_ms = start_ms + n * step_ms
        ts = max(now_ms, ts + 1)
        assert ts - now_ms <= LEAD_MS  # a stamp is never more than the lead late
        rows = ceilings.rows_for({source: ts}, now_ms, along=bool(along_every) and n % along_every == 0)
        assert all(row <= now_ms + LEAD_MS for row in rows.values())  # never ahead of the clock by more
        assert all(row > ts for row in rows.values())
        commits += bool(rows) and not (along_every and n % along_every == 0)
        highest = max([highest, *rows.values()])
        ceilings.stored({source: ts}, rows)
    return commits, ts, highest


def test_after_a_crash_ceilings_follow_the_clock_so_late_stamps_never_add_up():
    """A restart finds a ceiling almost a minute ahead of the clock: the stamps continue above it, late, but the
    rows written are never more than the lead ahead of the clock, so the next crash finds no more; about one commit
    a minute while they are late."""
    now = 1_000_000
    stored = now + LEAD_MS - 2_000  # written 2 s before the crash, the restart now
    commits, _, highest = run_late(ReceiptCeilings({"G": stored}, 10), "G", stored, now, frames=12_000, step_ms=10)
    assert commits <= 3  # 120 s at 100 frames/s: at 0 s, 20 s (the late stamps reach the ceiling), 80 s
    assert highest <= now + 120_000 + LEAD_MS
    # Crashes in a row (systemd restarting it 2 s later), each run 3-50 s long: the lateness stays within the lead.
    for run_s in [3, 5, 10, 20, 30, 45, 50, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]:
        start = now + 2_000
        ceilings = ReceiptCeilings({"G": stored}, 10)
        _, _, highest = run_late(ceilings, "G", stored, start, frames=run_s * 100, step_ms=10, along_every=700)
        now, stored = start + run_s * 1000, max(stored, highest)
        assert stored - now <= LEAD_MS


def test_a_clock_that_went_back_gets_ceilings_just_above_the_stamps():
    """Stamps far ahead of the clock (a Pi without a real-time clock restarted): each ceiling is MARGIN_MS above
    the stamp, never below it; a commit every MARGIN_MS frames, not one per frame."""
    ceilings = ReceiptCeilings({"G": 10_000_000}, 10)
    ts, commits = 10_000_000, 0
    for n in range(5_000):
        ts += 1
        rows = ceilings.rows_for({"G": ts}, now_ms=1_000 + n * 100)
        assert all(row == ts + MARGIN_MS for row in rows.values())
        commits += bool(rows)
        ceilings.stored({"G": ts}, rows)
    assert commits == 5_000 // MARGIN_MS
