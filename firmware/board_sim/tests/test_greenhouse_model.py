import random
import re
from datetime import datetime, timezone

from telemetry_board_sim import encode_frame, greenhouse_reading


def at(hour):
    return int(datetime(2026, 1, 10, hour, tzinfo=timezone.utc).timestamp() * 1000)


def values(hour, seed=1, **kw):
    return {k: float(v) for k, v in greenhouse_reading(at(hour), random.Random(seed), **kw)}


def test_reproducible_for_the_same_generator():
    assert greenhouse_reading(at(3), random.Random(5)) == greenhouse_reading(at(3), random.Random(5))


def test_nights_are_cold_and_dark_days_warm_and_bright():
    night, afternoon = values(4), values(14)
    assert night["temp_out"] < 2.5 and night["light"] <= 5
    assert afternoon["temp_out"] > night["temp_out"] + 8 and afternoon["light"] > 70
    assert all(values(h)["temp_in"] > values(h)["temp_out"] for h in range(24))
    assert all(0 <= values(h)["humidity"] <= 100 for h in range(24))


def test_a_colder_night_low_shifts_the_outside_temperature():
    assert values(4, night_low=-5.0)["temp_out"] < values(4, night_low=1.0)["temp_out"] - 5


def test_readings_encode_as_valid_frames():
    reading = greenhouse_reading(at(9), random.Random(2))
    assert [k for k, _ in reading] == ["temp_in", "temp_out", "humidity", "light"]
    assert all(re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", text) for _, text in reading)  # PROTOCOL.md decimals
    line = encode_frame("G", 1, reading)
    assert line.startswith(b"$T1,G,1,temp_in=") and line.endswith(b"\n")
