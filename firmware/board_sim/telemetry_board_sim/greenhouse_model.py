"""Plausible greenhouse readings for simulated boards: a diurnal cycle, cold nights, sensor noise.

Pure: the same time and random generator give the same reading, so demos and tests are reproducible.
"""

from __future__ import annotations

import math
import random

DAY_MS = 86_400_000


def day_cycle(t_ms: int) -> tuple[float, float]:
    """(warmth, sun) at Unix time t_ms, UTC hours standing in for solar time. warmth: -1 at 03:00 (coldest) to 1
    at 15:00 (warmest); sun: 0 from 18:00 to 06:00, 1 at noon."""
    hour = (t_ms % DAY_MS) / 3_600_000
    warmth = math.cos((hour - 15) / 24 * 2 * math.pi)
    sun = max(0.0, math.sin((hour - 6) / 12 * math.pi))
    return warmth, sun


def greenhouse_reading(t_ms: int, rng: random.Random, night_low: float = 1.0) -> list[tuple[str, str]]:
    """Metric name → decimal text at Unix time t_ms."""
    warmth, sun = day_cycle(t_ms)
    outside = night_low + 6 + 6 * warmth + rng.gauss(0, 0.3)
    inside = outside + 4 + 6 * sun + rng.gauss(0, 0.2)
    humidity = min(100.0, max(0.0, 75 - 25 * sun + rng.gauss(0, 1.5)))
    light = min(100, max(0, round(100 * sun + rng.gauss(0, 2))))
    return [
        ("temp_in", f"{inside:.2f}"),
        ("temp_out", f"{outside:.2f}"),
        ("humidity", f"{humidity:.1f}"),
        ("light", str(light)),
    ]
