"""The original room board: no radio, no frame, one CSV line a second at 9600 baud, `light,temperature` as its
sketch printed it (`sprintf("%d,%s", light, temp)` with the temperature as two-decimal text, then println).
Pure: the same time and random generator give the same reading."""

from __future__ import annotations

import math
import random

from .greenhouse_model import day_cycle

LIGHT_RANGE = range(0, 101)


def room_reading(t_ms: int, rng: random.Random) -> tuple[int, float]:
    """(light 0–100, temperature °C) of a heated room with a window at Unix time t_ms."""
    warmth, sun = day_cycle(t_ms)
    temperature = 20.5 + 1.5 * warmth + rng.gauss(0, 0.1)
    light = min(100, max(0, round(8 + 70 * sun + rng.gauss(0, 2))))
    return light, temperature


def room_csv_line(light: int, temperature: float, ending: bytes = b"\r\n") -> bytes:
    """One line as the board prints it, e.g. b"57,21.50\\r\\n" (Arduino's println ends lines with CR LF)."""
    if isinstance(light, bool) or not isinstance(light, int) or light not in LIGHT_RANGE:
        raise ValueError(f"light {light!r} is not a whole number 0-100")
    if not math.isfinite(temperature):
        raise ValueError(f"temperature {temperature!r} is not finite")
    return f"{light},{temperature:.2f}".encode("ascii") + ending
