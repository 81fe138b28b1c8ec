"""The demo's weather (`--weather demo`): the last three UTC days before now hold a frost night, a hot afternoon,
humid hours and a low battery, so every column of the report and every part of the status page has data."""

import random
import re
from collections import defaultdict

from telemetry_board_sim.demo_weather import FROST, HOT, MILD, demo_reading, weather_of
from telemetry_board_sim.simulation import SimulationSpec, simulated_lines

NOW = 1_780_000_000_000  # 2026-05-28 20:26:40 UTC
DAY = 86_400_000
FRAME = re.compile(rb"\$T1,(\w+),\d+,t=(\d+),(.*)\*[0-9A-F]{4}\n")


def backfill(weather="demo"):
    """Per UTC day number: per metric, the values of every simulated frame (3 boards, 3 days, every 5 minutes)."""
    days = defaultdict(lambda: defaultdict(list))
    for line in simulated_lines(SimulationSpec(sources=3, backfill_days=3, interval_s=300, weather=weather), NOW):
        _, t, pairs = FRAME.fullmatch(line).groups()
        for pair in pairs.decode().split(","):
            metric, value = pair.split("=")
            days[int(t) // DAY][metric].append(float(value))
    return days


def test_the_story_is_counted_back_from_today():
    today = NOW // DAY
    assert [weather_of(today - k, today) for k in range(4)] == [MILD, HOT, FROST, MILD]


def test_the_last_three_days_hold_a_frost_night_a_hot_afternoon_humid_hours_and_a_low_battery():
    days = backfill()
    today = NOW // DAY
    frost, hot, mild = days[today - 2], days[today - 1], days[today]
    assert min(frost["temp_in"]) < -2 and min(frost["temp_out"]) < -6  # inside frost (< 0 °C), a cold night (< 2)
    assert sum(v < 0 for v in frost["temp_in"]) >= 3 * 12 * 3  # 3 boards, at least 3 hours below 0 °C
    assert sum(v > 35 for v in hot["temp_in"]) >= 3 * 12 * 5 and max(hot["temp_in"]) < 50  # a hot afternoon
    assert sum(v > 90 for v in frost["humidity"]) >= 3 * 12 * 3  # the foggy frost morning
    assert min(frost["vbat"]) < 3.0 < min(hot["vbat"])  # the battery sags in the cold: LOW that day only
    assert 0 < min(mild["temp_in"]) and max(mild["temp_in"]) < 35
    assert all(len(d["vbat"]) == len(d["temp_in"]) for d in days.values())  # every frame carries vbat


def test_the_default_weather_is_unchanged_and_carries_no_battery():
    days = backfill("mild")
    assert all("vbat" not in d for d in days.values())
    assert all(min(d["temp_in"]) > 0 and max(d["temp_in"]) < 35 for d in days.values())


def test_the_same_time_and_generator_give_the_same_reading_and_the_day_turns_smoothly():
    assert demo_reading(NOW - DAY, NOW, random.Random(3)) == demo_reading(NOW - DAY, NOW, random.Random(3))
    midnight = NOW // DAY * DAY
    before, after = (dict(demo_reading(t, NOW, random.Random(0))) for t in (midnight - 1, midnight))
    assert abs(float(before["temp_out"]) - float(after["temp_out"])) < 0.01  # the same noise: no step at 00:00
