"""Unit tests of the report's intraday logic: gap segments, hours over a threshold, completeness, the time axis
across DST, the report config's thresholds and units, and the SVG charts' point counts."""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from telemetry_analytics.day_figures import bucket_series, day_rows
from telemetry_analytics.intraday import BUCKET_MS, cover_ms, covered, hours_where, max_step_ms, segments
from telemetry_analytics.local_days import BadInput
from telemetry_analytics.report_config import ReportConfig, parse_config
from telemetry_analytics.sample_period import completeness, expected_frames
from telemetry_analytics.svg_charts import Line, Series, day_bars, time_chart
from telemetry_analytics.time_axis import local_midnight_ms, ticks

UTC = timezone.utc
ZAG = ZoneInfo("Europe/Zagreb")
MIN = 60_000
HOUR = 3_600_000


def test_segments_split_where_a_step_is_longer_than_the_limit():
    assert segments([], 10) == []
    assert segments([0], 10) == [(0, 1)]
    assert segments([0, 10, 20, 45, 50, 100], 10) == [(0, 3), (3, 5), (5, 6)]
    # one lost 60-s frame in 5-minute buckets is no gap, two sample periods of 10 min are the limit
    assert max_step_ms(60) == 2 * BUCKET_MS and max_step_ms(600) == 20 * MIN and cover_ms(600) == 10 * MIN
    assert segments([0, 5 * MIN, 15 * MIN, 35 * MIN], max_step_ms(60)) == [(0, 3), (3, 4)]


def test_hours_count_the_time_each_bucket_stands_for_not_the_gaps():
    ts = [0, 5 * MIN, 10 * MIN, 60 * MIN]  # a 50-minute gap after the third bucket
    assert covered(ts, 10 * MIN, 5 * MIN) == [5 * MIN, 5 * MIN, 5 * MIN, 5 * MIN]
    start = int(datetime(2026, 10, 24, 22, tzinfo=UTC).timestamp() * 1000)  # Zagreb 10-25 00:00 (CEST)
    hours = hours_where([start + t for t in ts], [-1.0, 3.0, -0.5, -2.0], lambda v: v < 0, 10 * MIN, 5 * MIN, ZAG)
    assert hours == {date(2026, 10, 25): pytest.approx(15 / 60)}
    # a bucket counts for its local day: 23:55 local of the 24th belongs to the 24th
    assert hours_where([start - 5 * MIN], [-1.0], lambda v: v < 0, 10 * MIN, 5 * MIN, ZAG) == {
        date(2026, 10, 24): pytest.approx(5 / 60)}


def test_completeness_expects_frames_for_the_days_real_length():
    assert expected_frames(date(2026, 10, 25), ZAG, 600) == 150  # 25 hours
    assert expected_frames(date(2026, 3, 29), ZAG, 600) == 138  # 23 hours
    assert completeness(75, date(2026, 10, 25), ZAG, 600) == 0.5
    # a day still running expects the frames until now; a day not yet begun expects none
    six_am = local_midnight_ms(date(2026, 10, 25), ZAG) + 6 * HOUR
    assert expected_frames(date(2026, 10, 25), ZAG, 600, now_ms=six_am) == 36
    assert completeness(0, date(2026, 10, 26), ZAG, 600, now_ms=six_am) is None


def test_day_rows_include_days_without_data_and_take_the_longest_gap_of_any_metric():
    config = ReportConfig(frost_below=0.0)
    base = local_midnight_ms(date(2026, 10, 25), ZAG)
    buckets = [{"source": "a", "metric": "temp_in", "bucket": base + i * 10 * MIN, "min": v, "mean": v, "max": v,
                "count": 1} for i, v in enumerate([-1.0, -1.0, 5.0])]
    daily = [{"source": "a", "day": date(2026, 10, 25), "metric": m, "min": v, "max_gap_ms": g}
             for m, v, g in (("temp_in", -1.0, 600_000), ("vbat", 2.9, 1_800_000))]
    rows = day_rows("a", [date(2026, 10, 25), date(2026, 10, 26)], ZAG, config, bucket_series(buckets),
                    {("a", date(2026, 10, 25)): 3}, daily, period_s=600)
    assert rows[0] | {"completeness": None} == {
        "day": "2026-10-25", "hours": 25, "frames": 3, "expected_frames": 150, "completeness": None,
        "longest_gap_s": 1800, "frost_h": pytest.approx(20 / 60, abs=1e-3), "heat_h": 0, "humid_h": 0,
        "battery_min": 2.9}
    assert rows[1]["frames"] == 0 and rows[1]["completeness"] == 0 and rows[1]["longest_gap_s"] is None


def test_time_axis_across_dst_has_25_or_23_hourly_ticks():
    fall = ticks(local_midnight_ms(date(2026, 10, 25), ZAG), local_midnight_ms(date(2026, 10, 26), ZAG) - 1, ZAG,
                 max_ticks=30)
    assert len(fall) == 25 and [label for _, label in fall][1:5] == ["01:00", "02:00 CEST", "02:00 CET", "03:00"]
    assert all(b - a == HOUR for (a, _), (b, _) in zip(fall, fall[1:]))
    spring = ticks(local_midnight_ms(date(2026, 3, 29), ZAG), local_midnight_ms(date(2026, 3, 30), ZAG) - 1, ZAG,
                   max_ticks=30)
    assert len(spring) == 23 and "02:00" not in [label for _, label in spring]
    # several days: ticks at local midnights, 25 hours apart across the change
    days = ticks(local_midnight_ms(date(2026, 10, 24), ZAG), local_midnight_ms(date(2026, 10, 27), ZAG), ZAG)
    midnights = [ms for ms, label in days if "-" in label]
    assert [b - a for a, b in zip(midnights, midnights[1:])] == [24 * HOUR, 25 * HOUR, 24 * HOUR]
    # a zone half an hour off UTC still gets whole local hours
    kolkata = ZoneInfo("Asia/Kolkata")
    assert ticks(local_midnight_ms(date(2026, 1, 1), kolkata), local_midnight_ms(date(2026, 1, 1), kolkata) + 3 * HOUR,
                 kolkata)[1][1] == "01:00"


def test_config_thresholds_units_and_clear_errors():
    config = parse_config('frost_below = -1\nsample_period_s = 300\n[units]\nlight = "lx"\n')
    assert (config.frost_below, config.sample_period_s, dict(config.sample_periods)) == (-1.0, 300.0, {})
    assert parse_config("").sample_period_s is None  # unset: each source's observed period
    assert dict(parse_config("[sample_periods]\nnode3 = 61.44\n").sample_periods) == {"node3": 61.44}
    assert (config.unit("light"), config.unit("humidity"), config.unit("vbat"), config.unit("co2")) == (
        "lx", "%RH", "V", "")
    for bad, message in (('heat_above = "hot"', "heat_above must be a number"),
                         ("sample_period_s = 0", "sample_period_s must be > 0"), ('units = "C"', "units must be"),
                         ("[sample_periods]\na = -1", "sample_periods.a must be > 0"),
                         ('sample_periods = 5', "sample_periods must be a table"),
                         ('compare_metric = ""', "compare_metric must be a metric name"),
                         ("low_battery_v = true", "low_battery_v must be a number"), ("frost = 1", "unknown")):
        with pytest.raises(BadInput, match=message):
            parse_config(bad)


def polylines(svg: str) -> list[dict[str, str]]:
    return [dict(re.findall(r'([\w-]+)="([^"]*)"', m)) for m in re.findall(r"<polyline ([^>]*)/>", svg)]


def test_time_chart_draws_a_line_per_segment_with_its_point_count():
    start = local_midnight_ms(date(2026, 10, 25), ZAG)
    t = [start + i * BUCKET_MS for i in (0, 1, 2, 30, 31, 60)]
    svg = time_chart("intraday", "a · temp_in", start, start + 25 * HOUR, ZAG,
                     [Series("temp_in", t, [1.0] * 6, [0.0] * 6, [2.0] * 6)], max_step_ms(60), "°C",
                     [Line(0.5, "frost")], {"source": "a", "metric": "temp_in"})
    lines = polylines(svg)
    assert [int(p["data-points"]) for p in lines] == [3, 2, 1]
    assert [int(p["data-t0"]) for p in lines] == [t[0], t[3], t[5]]
    assert 'data-points="6"' in svg and svg.count('class="threshold"') == 1 and svg.count("<polygon") == 2
    assert svg.count('class="grid" data-t=') == 9  # every 3 h over 25 h: 00:00 … 21:00 and the next 00:00
    assert "no data" in time_chart("compare", "x", start, start + HOUR, ZAG, [], 1)
    bars = day_bars("a · readings per day", start, start + 3 * 24 * HOUR, ZAG,
                    [(date(2026, 10, 25), start, start + 25 * HOUR, 10), (date(2026, 10, 27), start + 49 * HOUR,
                                                                           start + 73 * HOUR, 5)])
    assert re.findall(r'data-day="([\d-]+)"', bars) == ["2026-10-25", "2026-10-27"]
