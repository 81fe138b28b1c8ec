"""The gateway's pure core: line assembly, sequence tracking, time stamping, write planning."""

from datetime import date

from hypothesis import given, strategies as st

from telemetry_gateway.line_assembler import DEFAULT_LIMIT, LineAssembler
from telemetry_gateway.seq_tracker import SeqTracker, SeqVerdict
from telemetry_gateway.timestamps import DAY_MS, Stamper, utc_day
from telemetry_gateway.reading_values import pack_values
from telemetry_gateway.spool import SpooledFrame
from telemetry_gateway.write_plan import plan_writes


# --- line assembly -------------------------------------------------------------------------------------------
def test_lines_split_across_chunks():
    a = LineAssembler()
    assert a.feed(b"$T1,G,1,a") == ([], 0)
    assert a.feed(b"=1*ABCD\n$T1,G,2,a=2*") == ([b"$T1,G,1,a=1*ABCD\n"], 0)
    assert a.feed(b"0000\r\n\n") == ([b"$T1,G,2,a=2*0000\r\n", b"\n"], 0)


def test_an_overlong_line_is_dropped_once_and_the_next_line_survives():
    a = LineAssembler()
    assert a.feed(b"x" * 150) == ([], 0)
    assert a.feed(b"x" * 150) == ([], 1)  # past the limit: dropped, memory freed
    assert a.feed(b"x" * 5000) == ([], 0)  # still the same line
    assert a.feed(b"tail\nnext\n") == ([b"next\n"], 0)


def test_limit_is_inclusive():
    a = LineAssembler()
    exact = b"y" * DEFAULT_LIMIT + b"\n"
    assert a.feed(exact) == ([exact], 0)
    assert a.feed(b"y" * (DEFAULT_LIMIT + 1) + b"\n") == ([], 1)


@given(st.lists(st.binary(max_size=40), max_size=30), st.integers(1, 50))
def test_chunking_never_changes_the_lines(chunks, cut):
    data = b"".join(chunks).replace(b"\n", b"") + b"\n" + b"\n".join(chunks) + b"\n"
    whole = LineAssembler().feed(data)
    pieced = LineAssembler()
    lines, dropped = [], 0
    for i in range(0, len(data), cut):
        got, d = pieced.feed(data[i:i + cut])
        lines += got
        dropped += d
    assert (lines, dropped) == whole


# --- sequence numbers ----------------------------------------------------------------------------------------
def test_duplicates_within_the_window_only():
    s = SeqTracker(duplicate_window_ms=5_000)
    assert s.observe("G", 10, 0) == SeqVerdict(False, 0, False)
    assert s.observe("G", 10, 1_000).duplicate
    assert s.observe("H", 10, 1_000) == SeqVerdict(False, 0, False)  # other source
    assert not s.observe("G", 10, 7_000).duplicate  # long ago: a wrapped counter


def test_gaps_wrap_and_restart():
    s = SeqTracker(duplicate_window_ms=1_000)
    s.observe("G", 65534, 0)
    assert s.observe("G", 65535, 10) == SeqVerdict(False, 0, False)
    assert s.observe("G", 0, 20) == SeqVerdict(False, 0, False)  # wrap is not a gap
    assert s.observe("G", 4, 30) == SeqVerdict(False, 3, False)  # 1, 2, 3 lost
    assert s.observe("G", 0, 40_000) == SeqVerdict(False, 0, True)  # reboot


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
