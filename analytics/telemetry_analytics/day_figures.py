"""Per source and local day (pure): the sample period and completeness (sample_period.py), the longest gap, hours
of inside frost, heat stress and humidity risk (from the 5-minute bucket means), and the battery's lowest value."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any, Iterable
from zoneinfo import ZoneInfo

from .intraday import cover_ms, hours_where, max_step_ms
from .local_days import hours_in_local_day
from .sample_period import FALLBACK_PERIOD_S, completeness, expected_frames

Series = dict[str, list]  # {"t": [epoch ms], "min": [...], "mean": [...], "max": [...], "count": [...]}


def bucket_series(buckets: Iterable[dict]) -> dict[tuple[str, str], Series]:
    """Rows (source, metric, bucket, min, mean, max, count) → per (source, metric) the series sorted by time."""
    out: dict[tuple[str, str], Series] = defaultdict(lambda: {"t": [], "min": [], "mean": [], "max": [], "count": []})
    for b in sorted(buckets, key=lambda b: (b["source"], b["metric"], b["bucket"])):
        s = out[(b["source"], b["metric"])]
        s["t"].append(b["bucket"])
        for key in ("min", "mean", "max", "count"):
            s[key].append(b[key])
    return dict(out)


def _hours(series: Series | None, predicate, period_s: float, tz: ZoneInfo) -> dict[date, float]:
    if not series:
        return {}
    return hours_where(series["t"], series["mean"], predicate, max_step_ms(period_s), cover_ms(period_s), tz)


def day_rows(source: str, days: list[date], tz: ZoneInfo, config, series: dict[tuple[str, str], Series],
             day_frames: dict[tuple[str, date], int], daily: list[dict], now_ms: int | None = None,
             period_s: float | None = None) -> list[dict[str, Any]]:
    """One row per requested day, days without data included (0 frames): an outage shows in the table. A day
    still running at now_ms expects the frames until then. period_s: the source's sample period (sample_period.py;
    None: unknown, no completeness)."""
    period = period_s or FALLBACK_PERIOD_S
    frost = _hours(series.get((source, config.inside)), lambda v: v < config.frost_below, period, tz)
    heat = _hours(series.get((source, config.inside)), lambda v: v > config.heat_above, period, tz)
    humid = _hours(series.get((source, config.humidity)), lambda v: v > config.humidity_above, period, tz)
    gaps: dict[date, int] = {}
    battery: dict[date, float] = {}
    for r in daily:
        if r["source"] != source:
            continue
        if r.get("max_gap_ms") is not None:
            gaps[r["day"]] = max(gaps.get(r["day"], 0), r["max_gap_ms"])
        if r["metric"] == config.battery:
            battery[r["day"]] = r["min"]
    rows = []
    for day in days:
        frames = day_frames.get((source, day), 0)
        rows.append({
            "day": day.isoformat(), "hours": hours_in_local_day(day, tz), "frames": frames,
            "expected_frames": None if period_s is None else round(expected_frames(day, tz, period_s, now_ms), 1),
            "completeness": completeness(frames, day, tz, period_s, now_ms),
            "longest_gap_s": gaps[day] / 1000 if day in gaps else None,
            "frost_h": round(frost.get(day, 0.0), 3), "heat_h": round(heat.get(day, 0.0), 3),
            "humid_h": round(humid.get(day, 0.0), 3), "battery_min": battery.get(day),
        })
    return rows
