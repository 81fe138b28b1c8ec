"""Unit tests of a source's sample period (configured, observed per day, observed on other days) and of
completeness: over the whole local day of 23, 24 or 25 hours, until now for today, at most 100 %."""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

import pytest

from telemetry_analytics.local_days import local_day_window
from telemetry_analytics.report_config import ReportConfig, parse_config
from telemetry_analytics.report_render import summary
from telemetry_analytics.sample_period import (CONFIGURED, FALLBACK_PERIOD_S, OBSERVED, OTHER_DAYS, completeness,
                                               day_periods, expected_frames, median_interval_ms, overall,
                                               source_period_s)

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


def test_a_board_every_61_44_s_is_complete_not_97_percent():
    start = midnight_ms(D1, UTC)
    ts = list(range(start, start + 86_400_000, 61_440))
    period = day_periods("node3", [D1], ReportConfig(), {D1: median_interval_ms(ts)})
    assert period == {D1: (61.44, OBSERVED)}
    assert len(ts) == 1407 and expected_frames(D1, UTC, 61.44) == 1406.25
    assert completeness(len(ts), D1, UTC, 61.44) == 1.0  # 1407 frames in 1406.25 periods: capped
    assert completeness(len(ts), D1, UTC, 60.0) == pytest.approx(0.977, abs=1e-3)  # the nominal period undercounts


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
    observed = {D1: 60_000.0}
    assert day_periods("node3", [D1], config, observed) == {D1: (61.44, CONFIGURED)}
    assert day_periods("node4", [D1], config, observed) == {D1: (300.0, CONFIGURED)}
    assert source_period_s("node4", config, observed) == 300.0


def test_a_day_with_under_two_frames_takes_the_other_days_median():
    observed = {D1: 62_000.0, D2: None, D3: 61_000.0}  # D2: one frame
    periods = day_periods("a", [D1, D2, D3, date(2026, 10, 27)], ReportConfig(), observed)
    assert periods[D1] == (62.0, OBSERVED) and periods[D2] == (61.5, OTHER_DAYS)
    assert periods[date(2026, 10, 27)] == (61.5, OTHER_DAYS)  # a silent day: 0 % with a known period
    assert day_periods("a", [D1], ReportConfig(), {}) == {D1: (None, None)}
    assert source_period_s("a", ReportConfig(), observed) == 61.5
    assert source_period_s("a", ReportConfig(), {}) == FALLBACK_PERIOD_S


def test_overall_caps_each_day_and_the_summary_says_so():
    days = [{"frames": 200, "expected_frames": 144.0}, {"frames": 72, "expected_frames": 144.0},
            {"frames": 0, "expected_frames": None}]
    assert overall(days) == (144 + 72) / 288
    assert overall([{"frames": 3, "expected_frames": None}]) is None
    report = {"title": "t", "from": "2026-10-24", "to": "2026-10-25", "time_zone": "UTC",
              "config": {"cold_threshold": 2.0},
              "sources": [{"source": "a", "readings": 1, "frames": 272, "inside": None, "outside": None,
                           "difference": None, "cold_nights": [], "days": days}]}
    assert "75% of the expected frames" in summary(report)
