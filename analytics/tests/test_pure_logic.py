"""Unit tests of the pure modules: local days and their UTC partitions, day selection, options, config, the
report's figures and rendering."""

from __future__ import annotations

from datetime import date, datetime, time, timezone
from zoneinfo import ZoneInfo

import pytest

from telemetry_analytics.job_options import parse_daily, parse_report
from telemetry_analytics.local_days import (BadInput, hours_in_local_day, local_day_window, local_days_of_utc_day,
                                            parse_month, utc_days_of_local_day, zone)
from telemetry_analytics.report_config import ReportConfig, parse_config
from telemetry_analytics.report_model import build_report, pooled_mean, record_keys
from telemetry_analytics.report_render import html, markdown, summary
from telemetry_analytics.selection import (Keep, change_buckets, days_if_every_source, keep_plan, partition_keys,
                                          targets_for_days, targets_from_changes)
from telemetry_analytics.svg_charts import nice_ticks

UTC = timezone.utc
ZAG = ZoneInfo("Europe/Zagreb")
D = date


@pytest.mark.parametrize("day, hours", [(D(2026, 3, 29), 23), (D(2026, 10, 25), 25), (D(2026, 6, 1), 24)])
def test_dst_days_have_23_or_25_hours(day, hours):
    assert hours_in_local_day(day, ZAG) == hours


def test_local_day_maps_to_utc_partitions():
    assert utc_days_of_local_day(D(2026, 6, 1), ZoneInfo("UTC")) == [D(2026, 6, 1)]
    assert utc_days_of_local_day(D(2026, 6, 1), ZAG) == [D(2026, 5, 31), D(2026, 6, 1)]
    assert utc_days_of_local_day(D(2026, 6, 1), ZoneInfo("America/New_York")) == [D(2026, 6, 1), D(2026, 6, 2)]
    assert local_day_window(D(2026, 3, 29), ZAG) == (datetime(2026, 3, 28, 23, tzinfo=UTC),
                                                     datetime(2026, 3, 29, 22, tzinfo=UTC))
    assert local_days_of_utc_day(D(2026, 3, 28), ZAG) == [D(2026, 3, 28), D(2026, 3, 29)]
    # A midnight skipped by DST (Santiago, September): the day starts at the transition, 04:00 UTC.
    assert local_day_window(D(2022, 9, 11), ZoneInfo("America/Santiago"))[0] == datetime(2022, 9, 11, 4, tzinfo=UTC)


def test_targets_and_partition_keys():
    rows = [(D(2026, 3, 27), "a"), (D(2026, 3, 28), "a"), (D(2026, 3, 28), "b")]
    targets = targets_for_days([D(2026, 3, 28)], rows, ZAG)
    assert targets == {("a", D(2026, 3, 28)), ("b", D(2026, 3, 28))}
    assert partition_keys(targets, ZAG) == [("a", D(2026, 3, 27)), ("a", D(2026, 3, 28)),
                                            ("b", D(2026, 3, 27)), ("b", D(2026, 3, 28))]
    since = datetime(2026, 4, 1, 10, 30, tzinfo=UTC)
    changes = [("a", D(2026, 3, 28), datetime(2026, 4, 1, 10, 31, tzinfo=UTC)),
               ("b", D(2026, 3, 30), datetime(2026, 4, 1, 10, 29, tzinfo=UTC))]
    assert targets_from_changes(changes, since, ZAG) == {("a", D(2026, 3, 28)), ("a", D(2026, 3, 29))}
    assert len(targets_from_changes(changes, None, ZoneInfo("UTC"))) == 2
    assert change_buckets(since, datetime(2026, 4, 1, 12, 0, tzinfo=UTC)) == [
        datetime(2026, 4, 1, h, tzinfo=UTC) for h in (10, 11, 12)]


def test_a_day_filter_replaces_the_targets_join_only_when_every_source_has_every_day():
    # Changes of a on UTC 03-28 and of b on 03-29: a's targets are Zagreb 03-28/29, b's 03-29/30. The partition
    # (a, UTC 03-29) is read and holds a's readings of local 03-30, a day of the run but not a target of a: only
    # the (source, day) join drops them, so there is no day filter.
    changes = [("a", D(2026, 3, 28), None), ("b", D(2026, 3, 29), None)]
    uneven = targets_from_changes(changes, None, ZAG)
    assert ("a", D(2026, 3, 29)) in partition_keys(uneven, ZAG) and ("a", D(2026, 3, 30)) not in uneven
    assert days_if_every_source(uneven) is None
    rows = [(D(2026, 3, 27), "a"), (D(2026, 3, 28), "a"), (D(2026, 3, 28), "b")]
    even = targets_for_days([D(2026, 3, 28), D(2026, 3, 29)], rows, ZAG)
    assert days_if_every_source(even) == [D(2026, 3, 28), D(2026, 3, 29)]
    assert days_if_every_source(set()) == []


def test_keep_plan_reads_utc_days_as_they_are_filters_by_window_or_joins():
    utc, london = ZoneInfo("UTC"), ZoneInfo("Europe/London")
    two = {("a", D(2026, 1, 30)), ("b", D(2026, 1, 30)), ("a", D(2026, 1, 31))}
    # A local day that is its own UTC day: the partitions read are the targets, whichever sources have which days.
    assert keep_plan(two, utc) == Keep("partitions")
    assert keep_plan(two, london) == Keep("partitions")  # GMT in winter
    # London's spring-forward day ends at 23:00 UTC: UTC 03-29 also holds an hour of local 03-30.
    spring = {("a", D(2026, 3, 29)), ("b", D(2026, 3, 29))}
    assert keep_plan(spring, london) == Keep("windows", ((datetime(2026, 3, 29, tzinfo=UTC),
                                                           datetime(2026, 3, 29, 23, tzinfo=UTC)),))
    even = {(s, D(2026, 3, d)) for s in "ab" for d in (28, 29, 31)}  # consecutive days merge into one window
    utc_hour = lambda d, h: datetime(2026, 3, d, h, tzinfo=UTC)  # noqa: E731
    assert keep_plan(even, ZAG).windows == ((utc_hour(27, 23), utc_hour(29, 22)), (utc_hour(30, 22), utc_hour(31, 22)))
    assert keep_plan({("a", D(2026, 3, 28)), ("a", D(2026, 3, 29)), ("b", D(2026, 3, 29))}, ZAG) == Keep("join")


@pytest.mark.parametrize("argv, message", [
    (["--day", "2026-02-30"], "bad date"), (["--tz", "Mars/Olympus"], "unknown time zone"),
    (["--from", "2026-03-02", "--to", "2026-03-01"], "before"), (["--day", "2026-03-01", "--all"], "choose one"),
    (["--from", "2026-03-01"], "go together"), (["--bogus"], "unrecognized")])
def test_bad_daily_options_are_one_line_errors(argv, message):
    with pytest.raises(BadInput, match=message):
        parse_daily(argv)


def test_report_options_and_config(tmp_path):
    config = tmp_path / "r.toml"
    config.write_text('inside = "t1"\ncold_threshold = 0.5\n')
    opts = parse_report(["--month", "2024-02", "--config", str(config)], config)
    assert (opts.days[0], opts.days[-1], len(opts.days)) == (D(2024, 2, 1), D(2024, 2, 29), 29)
    with pytest.raises(BadInput, match="bad month"):
        parse_month("2024-13")
    assert parse_config('inside = "t1"\ncold_threshold = 0.5\n').inside == "t1"
    for bad in ('colder = 1', 'night_start = "25:00"', 'cold_threshold = "x"', 'night_start = "06:00"'):
        with pytest.raises(BadInput):
            parse_config(bad)
    with pytest.raises(BadInput):
        zone("")


def ts(h, m=0):
    return datetime(2026, 2, 1, h, m, tzinfo=UTC)


DAILY = [
    {"source": "g", "day": D(2026, 2, 1), "metric": "temp_in", "count": 2, "min": 5.0, "min_ts": ts(3),
     "max": 20.0, "max_ts": ts(14), "mean": 12.5, "first_ts": ts(3), "last_ts": ts(14)},
    {"source": "g", "day": D(2026, 2, 2), "metric": "temp_in", "count": 1, "min": 5.0, "min_ts": ts(5),
     "max": 5.0, "max_ts": ts(5), "mean": 5.0, "first_ts": ts(5), "last_ts": ts(5)},
    {"source": "g", "day": D(2026, 2, 1), "metric": "temp_out", "count": 2, "min": 1.0, "min_ts": ts(3),
     "max": 9.0, "max_ts": ts(14), "mean": 5.0, "first_ts": ts(3), "last_ts": ts(14)},
]


def test_report_model_pools_means_and_breaks_ties_by_earliest():
    config = ReportConfig()
    assert pooled_mean(DAILY[:2]) == 10.0
    diffs = {"g": {"pairs": 2, "mean": 7.5, "biggest": 11.0, "biggest_ts": ts(14)}}
    cold = [{"source": "g", "night": D(2026, 1, 31), "below": 1, "lowest": 1.0, "lowest_ts": ts(3)}]
    keys = record_keys(config, DAILY, diffs, cold)
    assert keys == {("g", ts(3)), ("g", ts(14))}  # the 5.0 of day 2 ties with an earlier one: not needed
    records = {("g", ts(3)): {"temp_in": 5.0, "temp_out": 1.0}, ("g", ts(14)): {"temp_in": 20.0, "temp_out": 9.0}}
    report = build_report(config, "2026-02", "UTC", [D(2026, 2, 1), D(2026, 2, 2)], DAILY, {"g": 3}, diffs, cold,
                          records)
    g = report["sources"][0]
    assert g["readings"] == 5 and g["inside"]["mean"] == 10.0
    assert g["inside"]["lowest"]["ts"] == "2026-02-01T03:00:00.000Z"  # 5.0 twice: the earlier one
    assert g["cold_nights"][0]["lowest"]["record"] == {"temp_in": 5.0, "temp_out": 1.0}
    assert g["last"]["ts"] == "2026-02-01T14:00:00.000Z"
    page, md, text = html(report), markdown(report), summary(report)
    assert page.count("<svg") == 6 and "temp_in=5, temp_out=1" in page  # bars, 2 metrics × 2, comparison
    assert "| cold nights (outside below 2 °C) | 1 |" in md and "1 cold night(s)" in text


def test_nice_ticks_cover_the_range():
    ticks = nice_ticks(-2.4, 27.1)
    assert ticks[0] <= -2.4 and ticks[-1] >= 27.1 and len(ticks) <= 8
