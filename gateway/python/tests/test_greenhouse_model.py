import random
from datetime import datetime, timezone

from telemetry_gateway.frame import Frame, decode_line, encode_frame
from telemetry_gateway.greenhouse_model import greenhouse_reading


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


def test_readings_encode_as_valid_frames():
    reading = greenhouse_reading(at(9), random.Random(2))
    assert isinstance(decode_line(encode_frame("G", 1, reading)), Frame)
