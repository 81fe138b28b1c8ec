"""A source's sample period and a day's completeness (pure).

A source's period is the configured one when the report config gives it (`[sample_periods]` for that source, else
`sample_period_s`); otherwise the observed one: the median interval between that source's consecutive frames over
the report's days. The median, not the mean: an outage is one long interval and a burst of frames (a live demo, a
serial buffer read at once after a restart) many short ones, and neither moves it while the board's own rhythm
(61.44 s, not the nominal 60 s) holds for most of the period. Over the report's days, not per day: a day just begun
holds few frames, and a burst could outnumber them.

Completeness = frames received ÷ frames expected, at most 100 %, where expected = the whole local day (23, 24 or
25 hours; a day still running: until the report runs) ÷ the period. The whole day counts, not only the span from
the first frame to the last: a board whose battery died at noon, or that was installed at noon, shows 50 %.
"""

from __future__ import annotations

from datetime import date
from statistics import median
from typing import Sequence
from zoneinfo import ZoneInfo

from .local_days import local_day_window

CONFIGURED, OBSERVED = "configured", "observed"
# What the charts take as the period (what counts as a gap) of a source with neither a configured nor an observed
# one (a single frame): the sensor node's default.
FALLBACK_PERIOD_S = 60.0


def median_interval_ms(ts_ms: Sequence[int]) -> float | None:
    """The median step between consecutive distinct times (any order); None for fewer than two. Spark's
    `median` over the same steps gives the same number (the mean of the two middle ones for an even count)."""
    times = sorted(set(ts_ms))
    steps = [b - a for a, b in zip(times, times[1:])]
    return float(median(steps)) if steps else None


def source_period(config, source: str, observed_ms: float | None) -> tuple[float | None, str | None]:
    """(period in seconds, CONFIGURED or OBSERVED), or (None, None) when nothing tells (under two frames).
    observed_ms: the median interval between the source's consecutive frames over the report's days."""
    configured = config.sample_periods.get(source, config.sample_period_s)
    if configured is not None:
        return configured, CONFIGURED
    if observed_ms is not None and observed_ms > 0:
        return observed_ms / 1000, OBSERVED
    return None, None


def expected_frames(day: date, tz: ZoneInfo, period_s: float, now_ms: int | None = None) -> float:
    """Frames a board sending every period_s sends in a local day of 23, 24 or 25 hours; of a day still running
    at now_ms, those sent until then."""
    start, end = local_day_window(day, tz)
    end_ms = int(end.timestamp() * 1000) if now_ms is None else min(int(end.timestamp() * 1000), now_ms)
    return max(0, end_ms - int(start.timestamp() * 1000)) / 1000 / period_s


def completeness(frames: int, day: date, tz: ZoneInfo, period_s: float | None, now_ms: int | None = None
                 ) -> float | None:
    """Frames received against those expected, as a fraction capped at 1; None without a period or for a day that
    has not started."""
    if period_s is None:
        return None
    expected = expected_frames(day, tz, period_s, now_ms)
    return min(1.0, frames / expected) if expected else None


def overall(days: Sequence[dict]) -> float | None:
    """The completeness of several day rows together: capped frames over expected frames, days without a period
    left out."""
    known = [d for d in days if d["expected_frames"]]
    expected = sum(d["expected_frames"] for d in known)
    return sum(min(d["frames"], d["expected_frames"]) for d in known) / expected if expected else None
