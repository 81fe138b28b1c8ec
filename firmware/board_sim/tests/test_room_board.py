"""The original room board's CSV lines: `light,temperature` (sprintf("%d,%s") with two decimals, println)."""

import random
from datetime import datetime, timezone

import pytest

from telemetry_board_sim import room_csv_line, room_reading


@pytest.mark.parametrize("light,temperature,line", [
    (57, 21.5, b"57,21.50\r\n"), (0, -3.25, b"0,-3.25\r\n"), (100, 0.0, b"100,0.00\r\n"), (7, 19.996, b"7,20.00\r\n"),
])
def test_lines_as_the_board_prints_them(light, temperature, line):
    assert room_csv_line(light, temperature) == line


def test_the_line_ending_may_be_lf_alone():
    assert room_csv_line(57, 21.5, ending=b"\n") == b"57,21.50\n"


@pytest.mark.parametrize("light,temperature", [
    (-1, 20.0), (101, 20.0), (50.0, 20.0), (True, 20.0), (50, float("nan")), (50, float("inf")),
])
def test_values_the_board_cannot_print_are_refused(light, temperature):
    with pytest.raises(ValueError):
        room_csv_line(light, temperature)


def at(hour):
    return int(datetime(2026, 1, 10, hour, tzinfo=timezone.utc).timestamp() * 1000)


def test_a_room_is_dim_at_night_bright_by_day_and_near_21_degrees():
    night = [room_reading(at(2), random.Random(seed)) for seed in range(20)]
    noon = [room_reading(at(12), random.Random(seed)) for seed in range(20)]
    assert max(light for light, _ in night) < 20 < 60 < min(light for light, _ in noon)
    assert all(17 < temperature < 24 for _, temperature in night + noon)
    assert all(0 <= light <= 100 for light, _ in night + noon)


def test_reproducible_for_the_same_generator():
    assert room_reading(at(9), random.Random(3)) == room_reading(at(9), random.Random(3))
    assert room_reading(at(9), random.Random(3)) != room_reading(at(9), random.Random(4))
