"""The demo's greenhouse weather: over the three UTC days up to now, a frost night, a hot afternoon and a mild day,
with a battery voltage, so that every figure of the report and every part of the status page has something to show.

Pure: the same (t, now) and random generator give the same reading. The days are counted back from now's UTC day,
so any run's last three days hold the same story: the day before yesterday dawns in frost (inside below 0 °C around
03:00 UTC, foggy: humidity above 90 %RH), yesterday's afternoon is hot (inside above 35 °C from about 10:00 to
17:00 UTC), today is mild. Older days repeat the three. The battery sags in the cold (below 3.0 V in the frost).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from .greenhouse_model import DAY_MS, day_cycle

HOUR_MS = 3_600_000


@dataclass(frozen=True)
class Weather:
    low: float     # outside at 03:00 UTC, °C
    high: float    # outside at 15:00 UTC, °C
    gain: float    # inside above outside in full sun (closed vents), °C
    humid: float   # humidity at 03:00 UTC, %RH


MILD = Weather(low=4.0, high=15.0, gain=8.0, humid=80.0)
HOT = Weather(low=12.0, high=30.0, gain=10.0, humid=70.0)
FROST = Weather(low=-7.0, high=8.0, gain=6.0, humid=97.0)
STORY = (MILD, HOT, FROST)  # today, yesterday, the day before yesterday; older days repeat


def weather_of(day: int, today: int) -> Weather:
    """The weather of UTC day number `day` (days since the epoch) in a run whose now falls on `today`."""
    return STORY[(today - day) % len(STORY)]


def _ease(a: float, b: float, f: float) -> float:
    """From a to b as f goes 0 → 1, on a half cosine (flat at both ends, as a day's temperature turns)."""
    return a + (b - a) * (1 - math.cos(math.pi * f)) / 2


def outside_and_humid(t_ms: int, now_ms: int) -> tuple[float, float]:
    """Outside °C and night humidity %RH at t_ms, without noise: 03:00 lows and 15:00 highs joined smoothly."""
    today = now_ms // DAY_MS
    day, into = divmod(t_ms, DAY_MS)
    hour = into / HOUR_MS
    w = weather_of(day, today)
    if hour < 3:  # after the evening of the day before
        prev = weather_of(day - 1, today)
        return _ease(prev.high, w.low, (hour + 9) / 12), _ease(prev.humid, w.humid, (hour + 21) / 24)
    nxt = weather_of(day + 1, today)
    humid = _ease(w.humid, nxt.humid, (hour - 3) / 24)
    if hour < 15:
        return _ease(w.low, w.high, (hour - 3) / 12), humid
    return _ease(w.high, nxt.low, (hour - 15) / 12), humid


def demo_reading(t_ms: int, now_ms: int, rng: random.Random) -> list[tuple[str, str]]:
    """Metric name → decimal text at Unix time t_ms, for a run at now_ms: the four greenhouse metrics and vbat."""
    _, sun = day_cycle(t_ms)
    w = weather_of(t_ms // DAY_MS, now_ms // DAY_MS)
    clear, humid = outside_and_humid(t_ms, now_ms)
    outside = clear + rng.gauss(0, 0.3)
    inside = outside + 4 + w.gain * sun + rng.gauss(0, 0.2)
    humidity = min(100.0, max(0.0, humid - 30 * sun + rng.gauss(0, 1.0)))
    light = min(100, max(0, round(100 * sun + rng.gauss(0, 2))))
    vbat = 3.30 + 0.08 * sun - 0.04 * max(0.0, 4 - outside) + rng.gauss(0, 0.004)
    return [
        ("temp_in", f"{inside:.2f}"),
        ("temp_out", f"{outside:.2f}"),
        ("humidity", f"{humidity:.1f}"),
        ("light", str(light)),
        ("vbat", f"{vbat:.3f}"),
    ]
