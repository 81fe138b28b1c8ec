"""The gateway's pure core: line assembly, sequence tracking, time stamping, write planning."""

import re
from datetime import date

from hypothesis import given, strategies as st

from telemetry_gateway.frame import MAX_LINE_BYTES
from telemetry_gateway.line_assembler import DEFAULT_LIMIT, LineAssembler
from telemetry_gateway.seq_tracker import CONFLICT, DUPLICATE, NEXT, RESTARTED, SeqTracker, SeqVerdict
from telemetry_gateway.timestamps import DAY_MS, Stamper, utc_day
from telemetry_gateway.reading_values import pack_values
from telemetry_gateway.spool import SpooledFrame
from telemetry_gateway.write_plan import plan_writes


# --- line assembly -------------------------------------------------------------------------------------------
def test_lines_split_across_chunks():
    a = LineAssembler()
    assert a.feed(b"$T1,G,1,a") == ([], 0)
    assert a.feed(b"=1*ABCD\n$T1,G,2,a=2*") == ([b"$T1,G,1,a=1*ABCD"], 0)
    assert a.feed(b"0000\r\n\n") == ([b"$T1,G,2,a=2*0000"], 0)


def test_cr_lf_and_crlf_all_end_lines_and_empty_lines_are_none():
    a = LineAssembler()
    # A CR-only board's frames are separate lines, not one line of which only the last frame counts.
    assert a.feed(b"$A*0001\r$B*0002\r$C*0003\r") == ([b"$A*0001", b"$B*0002", b"$C*0003"], 0)
    assert a.feed(b"x\ny\r\nz\r") == ([b"x", b"y", b"z"], 0)
    assert a.feed(b"\n\r\n\r\r\n\n\n") == ([], 0)  # endings only: no lines, nothing dropped
    assert a.feed(b"  \r") == ([b"  "], 0)  # blank is not empty: the decoder rejects it as `empty`


def test_a_crlf_split_across_reads_is_one_ending():
    a = LineAssembler()
    assert a.feed(b"$T1,G,1,a=1*ABCD\r") == ([b"$T1,G,1,a=1*ABCD"], 0)
    assert a.feed(b"\n$T1,G,2,a=2*ABCD\r") == ([b"$T1,G,2,a=2*ABCD"], 0)
    assert a.feed(b"\n") == ([], 0)
    assert a.feed(b"half") == ([], 0)
    assert a.feed(b"\r") == ([b"half"], 0)
    assert a.feed(b"\n") == ([], 0)


def test_an_overlong_line_is_dropped_once_and_the_next_line_survives():
    a = LineAssembler()
    assert a.feed(b"x" * 150) == ([], 0)
    assert a.feed(b"x" * 150) == ([], 1)  # past the limit: dropped, memory freed
    assert a.feed(b"x" * 5000) == ([], 0)  # still the same line
    assert a.feed(b"tail\nnext\n") == ([b"next"], 0)
    assert a.feed(b"y" * 300 + b"\rok\r" + b"z" * 201 + b"\r\n") == ([b"ok"], 2)  # whole ones within a read


def test_limit_is_inclusive():
    a = LineAssembler()
    exact = b"y" * DEFAULT_LIMIT
    assert DEFAULT_LIMIT == MAX_LINE_BYTES
    assert a.feed(exact + b"\n") == ([exact], 0)
    assert a.feed(exact + b"\r\n") == ([exact], 0)  # the ending does not count
    assert a.feed(b"y" * (DEFAULT_LIMIT + 1) + b"\r") == ([], 1)


def test_reset_reports_the_partial_line_it_throws_away():
    a = LineAssembler()
    assert a.reset() == 0
    assert a.feed(b"$T1,G,1,te") == ([], 0)
    assert a.reset() == 1  # the port was reopened mid-line
    assert a.reset() == 0
    assert a.feed(b"mp=1*ABCD\n") == ([b"mp=1*ABCD"], 0)  # the rest is a line of its own (the decoder's)
    assert a.feed(b"x" * 300) == ([], 1)
    assert a.reset() == 0  # an over-long line was counted when it was dropped, not again
    assert a.feed(b"tail\n") == ([b"tail"], 0)  # after a reset nothing is being discarded any more


def reference_lines(data: bytes, limit: int) -> tuple[list[bytes], int]:
    """The assembler's rules, written differently: split at the endings with a regex; the last piece is unfinished
    (counted only once it is over the limit)."""
    *complete, unfinished = re.split(rb"\r\n|\r|\n", data)
    lines = [piece for piece in complete if piece and len(piece) <= limit]
    return lines, sum(len(piece) > limit for piece in complete) + (len(unfinished) > limit)


def chunked(assembler: LineAssembler, data: bytes, cuts: list[int]) -> tuple[list[bytes], int]:
    lines, dropped, start = [], 0, 0
    for end in sorted(cuts) + [len(data)]:
        got, d = assembler.feed(data[start:end])
        lines += got
        dropped += d
        start = max(start, end)
    return lines, dropped


@given(st.lists(st.binary(max_size=40), max_size=30), st.integers(1, 50), st.sampled_from([b"\n", b"\r", b"\r\n"]))
def test_chunking_never_changes_the_lines(chunks, cut, ending):
    data = b"".join(chunks).replace(ending, b"") + ending + ending.join(chunks) + ending
    whole = LineAssembler().feed(data)
    pieced = LineAssembler()
    lines, dropped = [], 0
    for i in range(0, len(data), cut):
        got, d = pieced.feed(data[i:i + cut])
        lines += got
        dropped += d
    assert (lines, dropped) == whole


@given(st.lists(st.one_of(st.binary(max_size=12), st.sampled_from([b"\r", b"\n", b"\r\n", b"\n\r", b"ab\rcd"])),
                max_size=40),
       st.lists(st.integers(0, 500), max_size=12))
def test_any_endings_any_chunking_give_the_reference_lines(pieces, cuts):
    data = b"".join(pieces)
    limit = 8  # small, so over-long lines and partial lines over the limit are common
    assert chunked(LineAssembler(limit), data, cuts) == reference_lines(data, limit)


# --- sequence numbers ----------------------------------------------------------------------------------------
def test_duplicates_within_the_window_only():
    s = SeqTracker(duplicate_window_ms=5_000)
    assert s.observe("G", 10, 0, 111) is NEXT
    assert s.observe("G", 10, 1_000, 111) is DUPLICATE
    assert s.observe("H", 10, 1_000, 111) is NEXT  # other source
    assert s.observe("G", 10, 7_000, 111) == SeqVerdict(False, 65535, False)  # long ago: a wrapped counter


def test_gaps_wrap_and_restart():
    s = SeqTracker(duplicate_window_ms=1_000)
    s.observe("G", 65534, 0)
    assert s.observe("G", 65535, 10) is NEXT
    assert s.observe("G", 0, 20) is NEXT  # wrap is not a gap, nor a restart
    assert s.observe("G", 4, 30) == SeqVerdict(False, 3, False)  # 1, 2, 3 lost
    assert s.observe("G", 0, 40_000) is RESTARTED  # reboot


def test_same_seq_with_other_content_is_a_conflict_kept_not_a_duplicate():
    s = SeqTracker(duplicate_window_ms=5_000)
    assert s.observe("G", 10, 0, 111) is NEXT
    assert s.observe("G", 10, 100, 222) is CONFLICT  # another board named G, or an unnoticed restart
    assert s.observe("G", 10, 200, 222) is DUPLICATE  # the conflicting frame's own retransmission
    assert s.observe("G", 11, 300, 333) is NEXT  # the conflict neither moved the sequence nor counted a gap
    assert s.observe("G", 9, 400, 444) == SeqVerdict(False, 65533, False)  # never seen: an old seq, as before
    assert s.observe("G", 9, 500, 555) is CONFLICT


def test_a_restart_forgets_the_previous_runs_seqs():
    s = SeqTracker(duplicate_window_ms=60_000)
    for seq in range(6):
        s.observe("G", seq, seq, 1000 + seq)
    assert s.observe("G", 0, 10, 5) is RESTARTED  # seq 0 not after 65535
    # The new run's 1, 2: neither duplicates (same content as before) nor conflicts (other content).
    assert s.observe("G", 1, 11, 1001) is NEXT
    assert s.observe("G", 2, 12, 7) is NEXT
    assert s.observe("G", 2, 13, 7) is DUPLICATE  # the rule still catches the new run's retransmissions


def test_seq_0_repeated_with_its_content_is_a_duplicate_with_other_content_a_restart():
    s = SeqTracker(duplicate_window_ms=5_000)
    assert s.observe("G", 0, 0, 7) is NEXT  # a source's first frame is never a restart
    assert s.observe("G", 0, 10, 7) is DUPLICATE  # the seq 0 just seen, resent
    assert s.observe("G", 0, 20, 8) is RESTARTED  # rebooted again right after its first frame
    assert s.observe("G", 0, 6_000, 8) is RESTARTED  # past the window: not a duplicate any more
    s.observe("G", 1, 6_010, 9)
    assert s.observe("G", 0, 6_020, 8) is RESTARTED  # not the frame just before: the rule says restart


def test_forget_drops_a_sources_state():
    s = SeqTracker(duplicate_window_ms=5_000)
    s.observe("G", 10, 0, 1)
    s.observe("H", 10, 0, 1)
    s.forget("G")
    s.forget("nobody")
    assert len(s) == 1
    assert s.observe("G", 10, 1, 1) is NEXT  # a first frame again


# --- time ----------------------------------------------------------------------------------------------------
NOW = 1_780_000_000_000


def test_explicit_time_used_when_plausible():
    stamper = Stamper(max_future_ms=60_000, max_age_ms=7 * DAY_MS)
    assert stamper.stamp("L", NOW - 3 * DAY_MS, NOW).ts_ms == NOW - 3 * DAY_MS
    assert stamper.stamp("L", NOW + 59_000, NOW).ts_ms == NOW + 59_000


def test_implausible_time_falls_back_to_receipt():
    stamper = Stamper(max_future_ms=60_000, max_age_ms=7 * DAY_MS)
    future = stamper.stamp("L", NOW + 61_000, NOW)
    assert future.ts_ms == NOW and future.explicit_t_refused
    assert stamper.stamp("L", NOW - 8 * DAY_MS, NOW + 5).ts_ms == NOW + 5


def test_receipt_times_strictly_increase_per_source():
    stamper = Stamper(60_000, DAY_MS)
    stamps = [stamper.stamp("G", None, NOW).ts_ms for _ in range(3)]
    assert stamps == [NOW, NOW + 1, NOW + 2]
    assert stamper.stamp("H", None, NOW).ts_ms == NOW  # per source
    assert stamper.stamp("G", None, NOW - 50).ts_ms == NOW + 3  # the clock stepped back: still increasing


def test_a_forgotten_source_keeps_strictly_increasing_stamps():
    stamper = Stamper(60_000, DAY_MS)
    burst = [stamper.stamp("G", None, NOW).ts_ms for _ in range(50)]  # ran 49 ms ahead of the clock
    stamper.forget("G")  # evicted (other sources were seen more recently)
    assert stamper.sources() == []
    assert stamper.stamp("G", None, NOW + 10).ts_ms == burst[-1] + 1
    assert stamper.stamp("H", None, NOW + 10).ts_ms == burst[-1] + 1  # any unknown source: above the floor
    assert stamper.stamp("K", None, NOW + 100).ts_ms == NOW + 100  # the floor is in the past: no effect


def test_loaded_stamps_are_bounded_to_the_newest():
    loaded = {"a": NOW + 1, "b": NOW + 5, "c": NOW + 3, "d": NOW + 4}
    stamper = Stamper(60_000, DAY_MS, last_receipt=loaded, max_sources=2)
    assert stamper.sources() == ["d", "b"]  # oldest stamp first
    # "a" and "c" were dropped: their next stamps are still above anything they had (the oldest kept stamp + 1).
    assert stamper.stamp("c", None, NOW).ts_ms == NOW + 5
    assert stamper.stamp("b", None, NOW).ts_ms == NOW + 6
    unbounded = Stamper(60_000, DAY_MS, last_receipt=loaded)
    assert unbounded.sources() == ["a", "c", "d", "b"]
    assert unbounded.stamp("x", None, NOW).ts_ms == NOW  # nothing forgotten: no floor


def test_utc_day():
    assert utc_day(0) == date(1970, 1, 1)
    assert utc_day(DAY_MS - 1) == date(1970, 1, 1)
    assert utc_day(1_774_742_400_000) == date(2026, 3, 29)
    assert utc_day(-1) == date(1969, 12, 31)


# --- write planning ------------------------------------------------------------------------------------------
def frame(i, source, ts, **values):
    return SpooledFrame(i, source, ts, 0, *pack_values(tuple((k, float(v)) for k, v in values.items())))


def test_batches_group_by_partition_and_never_split_a_frame():
    midnight = 1_774_742_400_000  # 2026-03-29T00:00Z
    frames = [frame(1, "G", midnight - 1, a=1, b=2), frame(2, "G", midnight, a=3, b=4),
              frame(3, "H", midnight, a=5), frame(4, "G", midnight + 1, a=6, b=7), frame(5, "G", midnight + 2, a=8)]
    plan = plan_writes(frames, batch_rows=4)
    summary = [(b.source, b.day.isoformat(), [f.id for f in b.frames], b.rows) for b in plan.batches]
    assert summary == [("G", "2026-03-28", [1], 2), ("G", "2026-03-29", [2, 4], 4), ("H", "2026-03-29", [3], 1),
                       ("G", "2026-03-29", [5], 1)]
    assert sorted(plan.days) == [("G", date(2026, 3, 28)), ("G", date(2026, 3, 29)), ("H", date(2026, 3, 29))]


def test_latest_takes_the_newest_reading_whatever_the_order():
    plan = plan_writes([frame(1, "G", 200, a=2.0), frame(2, "G", 100, a=1.0, b=5.0), frame(3, "G", 150, b=6.0),
                        frame(4, "H", 50, a=9.0)], batch_rows=100)
    latest = {(r.source, r.metric): (r.ts_ms, r.value) for r in plan.latest}
    assert latest == {("G", "a"): (200, 2.0), ("G", "b"): (150, 6.0), ("H", "a"): (50, 9.0)}


def test_on_equal_times_the_later_frame_is_latest():
    plan = plan_writes([frame(1, "G", 100, a=1.0, b=1.0), frame(2, "G", 100, a=2.0)], batch_rows=100)
    assert {(r.metric, r.value) for r in plan.latest} == {("a", 2.0), ("b", 1.0)}


@given(st.lists(st.tuples(st.sampled_from("GH"), st.integers(0, 3 * DAY_MS),
                          st.dictionaries(st.sampled_from(["a", "b", "c"]), st.floats(-1e6, 1e6), min_size=1)),
                max_size=40),
       st.integers(1, 6))
def test_plan_keeps_every_reading_once_in_its_partition(spec, batch_rows):
    frames = [frame(i + 1, source, ts, **values) for i, (source, ts, values) in enumerate(spec)]
    plan = plan_writes(frames, batch_rows)
    planned = [(f.id, b.source, b.day) for b in plan.batches for f in b.frames]
    assert sorted(planned) == [(f.id, f.source, utc_day(f.ts_ms)) for f in frames]
    assert all(b.rows <= batch_rows or len(b.frames) == 1 for b in plan.batches)
    assert all(b.rows == sum(len(f.values) for f in b.frames) for b in plan.batches)


def test_a_frame_larger_than_a_batch_gets_its_own():
    plan = plan_writes([frame(1, "G", 1, **{f"m{i}": i for i in range(7)}), frame(2, "G", 2, a=1)], batch_rows=5)
    assert [b.rows for b in plan.batches] == [7, 1]
