"""Unit tests of a source's sample period (configured, or observed: the median interval between its consecutive
frames over the report's days) and of completeness: over the whole local day of 23, 24 or 25 hours, until now for
today, at most 100 %."""

from __future__ import annotations

from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

from telemetry_analytics.local_days import local_day_window
from telemetry_analytics.report_config import ReportConfig, parse_config
from telemetry_analytics.report_model import build_report
from telemetry_analytics.report_render import html, markdown, summary
from telemetry_analytics.sample_period import (CONFIGURED, OBSERVED, completeness, expected_frames,
                                               median_interval_ms, overall, source_period)

ZAG = ZoneInfo("Europe/Zagreb")
UTC = ZoneInfo("UTC")
D1, D2, D3 = date(2026, 10, 24), date(2026, 10, 25), date(2026, 10, 26)


def midnight_ms(day: date, tz: ZoneInfo) -> int:
    return int(local_day_window(day, tz)[0].timestamp() * 1000)


def test_the_median_step_ignores_an_outage_duplicates_and_order():
    assert median_interval_ms([]) is None and median_interval_ms([5]) is None and median_interval_ms([5, 5]) is None
    assert median_interval_ms([0, 61_440, 122_880, 184_320]) == 61_440
    # a 3-hour outage is one long step; a frame read twice (the same ts) is one frame
    assert median_interval_ms([184_320, 0, 61_440, 61_440, 122_880, 10_984_320]) == 61_440
    assert median_interval_ms([0, 60_000, 122_000]) == 61_000  # an even count: the mean of the middle two


def test_a_burst_early_in_a_day_does_not_move_the_period_over_the_report_s_days():
    """make demo's case: two days of frames every 300 s, then today 42 of them and a live burst of 48 frames
    0.3 s apart. Over today alone the median would be 0.3 s (today 0 % complete); over the days it is 300 s."""
    start = midnight_ms(D1, UTC)
    today = midnight_ms(D3, UTC)
    regular = list(range(start, today + 42 * 300_000, 300_000))
    burst = [today + 42 * 300_000 + i * 300 for i in range(1, 49)]
    assert median_interval_ms([t for t in regular + burst if t >= today]) == 300
    observed = median_interval_ms(regular + burst)
    assert observed == 300_000 and source_period(ReportConfig(), "sim1", observed) == (300.0, OBSERVED)
    now = burst[-1] + 1
    assert completeness(42 + 48, D3, UTC, 300.0, now) == 1.0  # capped: the burst adds no completeness


def test_a_board_every_61_44_s_is_complete_not_97_percent():
    start = midnight_ms(D1, UTC)
    ts = list(range(start, start + 86_400_000, 61_440))
    assert source_period(ReportConfig(), "node3", median_interval_ms(ts)) == (61.44, OBSERVED)
    assert len(ts) == 1407 and expected_frames(D1, UTC, 61.44) == 1406.25
    assert completeness(len(ts), D1, UTC, 61.44) == 1.0  # 1407 frames in 1406.25 periods: capped
    assert round(completeness(len(ts), D1, UTC, 60.0), 3) == 0.977  # the nominal 60 s would undercount


def test_the_whole_local_day_counts_half_a_day_is_half_complete():
    # 25 hours of Zagreb's October 25; frames every 600 s from noon only (a board installed at noon)
    assert expected_frames(D2, ZAG, 600) == 150
    assert completeness(75, D2, ZAG, 600) == 0.5
    six_am = midnight_ms(D2, ZAG) + 6 * 3_600_000  # a day still running: the frames until the report runs
    assert expected_frames(D2, ZAG, 600, now_ms=six_am) == 36 and completeness(36, D2, ZAG, 600, six_am) == 1.0
    assert completeness(0, D3, ZAG, 600, now_ms=six_am) is None  # not begun
    assert completeness(10, D2, ZAG, None) is None  # no period known


def test_configured_periods_win_per_source_then_for_all():
    config = parse_config("sample_period_s = 300\n[sample_periods]\nnode3 = 61.44\n")
    assert source_period(config, "node3", 60_000.0) == (61.44, CONFIGURED)
    assert source_period(config, "node4", 60_000.0) == (300.0, CONFIGURED)
    assert source_period(ReportConfig(), "node4", None) == (None, None)  # a single frame: nothing tells


def test_overall_caps_each_day_and_the_report_says_what_complete_means():
    days = [{"frames": 200, "expected_frames": 144.0}, {"frames": 72, "expected_frames": 144.0},
            {"frames": 0, "expected_frames": None}]
    assert overall(days) == (144 + 72) / 288
    assert overall([{"frames": 3, "expected_frames": None}]) is None
    at = datetime(2026, 10, 24, 12, tzinfo=timezone.utc)
    daily = [{"source": "a", "day": D1, "metric": "temp_in", "count": 2, "min": 5.0, "min_ts": at, "max": 6.0,
              "max_ts": at, "mean": 5.5, "first_ts": at, "last_ts": at, "max_gap_ms": 600_000}]
    report = build_report(ReportConfig(), "t", "UTC", [D1, D2], daily, {"a": 72}, {}, [], {},
                          day_frames={("a", D1): 72}, periods_ms={"a": 600_000.0})
    a = report["sources"][0]
    assert (a["sample_period_s"], a["sample_period_from"]) == (600.0, OBSERVED)
    assert [(d["frames"], d["expected_frames"], d["completeness"]) for d in a["days"]] == [
        (72, 144.0, 0.5), (0, 144.0, 0.0)]
    assert "| sample period | 600 s (observed: the median interval between consecutive frames) |" in markdown(report)
    assert "complete: frames received ÷ frames expected, at most 100 %" in html(report)
    assert "25% of the expected frames" in summary(report)
