"""Time-axis ticks in a local zone (pure): whole local hours or local midnights between two UTC instants.

Ticks are found by walking UTC instants and keeping the local wall-clock times wanted, so a 25-hour day gets 25
hourly ticks (the repeated hour twice, told apart by its zone abbreviation) and a 23-hour day 23.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

UTC = timezone.utc
STEPS_H = (1, 2, 3, 6, 12, 24, 48, 168)
QUARTER_MS = 900_000  # zones are whole quarter hours off UTC


def step_hours(start_ms: int, end_ms: int, max_ticks: int = 12) -> int:
    span_h = (end_ms - start_ms) / 3_600_000
    return next((s for s in STEPS_H if span_h / s <= max_ticks), STEPS_H[-1])


def _local(ms: int, tz: ZoneInfo) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).astimezone(tz)


def ticks(start_ms: int, end_ms: int, tz: ZoneInfo, max_ticks: int = 12) -> list[tuple[int, str]]:
    """(epoch ms, label) of the ticks in [start_ms, end_ms]."""
    step = step_hours(start_ms, end_ms, max_ticks)
    if step >= 24:
        return _midnights(start_ms, end_ms, tz, step // 24)
    out = []
    ms = -(-start_ms // QUARTER_MS) * QUARTER_MS
    while ms <= end_ms:
        t = _local(ms, tz)
        if t.minute == 0 and t.hour % step == 0:
            label = t.strftime("%m-%d") if t.hour == 0 else t.strftime("%H:%M")
            if t.hour != 0 and _repeated(t):
                label += f" {t.tzname()}"
            out.append((ms, label))
        ms += QUARTER_MS
    return out


def _repeated(t: datetime) -> bool:
    """A wall-clock time that happens twice (the hour a DST change repeats)."""
    naive = t.replace(tzinfo=None)
    return naive.replace(tzinfo=t.tzinfo, fold=0).utcoffset() != naive.replace(tzinfo=t.tzinfo, fold=1).utcoffset()


def _midnights(start_ms: int, end_ms: int, tz: ZoneInfo, every_days: int) -> list[tuple[int, str]]:
    out = []
    day = _local(start_ms, tz).date()
    last = _local(end_ms, tz).date()
    while day <= last:
        ms = int(datetime(day.year, day.month, day.day, tzinfo=tz).timestamp() * 1000)
        if start_ms <= ms <= end_ms and (every_days == 1 or day.toordinal() % every_days == 1 % every_days):
            out.append((ms, day.strftime("%m-%d")))
        day += timedelta(days=1)
    return out


def local_midnight_ms(day: date, tz: ZoneInfo) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=tz).timestamp() * 1000)
