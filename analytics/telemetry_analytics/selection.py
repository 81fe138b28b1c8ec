"""Which (source, local day) pairs a daily run recomputes, and which readings partitions that means reading.

Pure: callers pass in what they read from source_days / day_changes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Iterable
from zoneinfo import ZoneInfo

from .local_days import local_day_window, local_days_of_utc_day, utc_days_of_local_day

Target = tuple[str, date]          # (source, local day)
PartitionKey = tuple[str, date]    # (source, UTC day): the partition key of readings


def utc_days_of(local_days: Iterable[date], tz: ZoneInfo) -> list[date]:
    return sorted({u for d in local_days for u in utc_days_of_local_day(d, tz)})


def targets_for_days(local_days: Iterable[date], source_days: Iterable[tuple[date, str]],
                     tz: ZoneInfo) -> set[Target]:
    """Every source that wrote on a UTC day overlapping a requested local day, paired with that local day."""
    sources_on: dict[date, set[str]] = defaultdict(set)
    for utc_day, source in source_days:
        sources_on[utc_day].add(source)
    return {(source, day) for day in local_days for u in utc_days_of_local_day(day, tz) for source in sources_on[u]}


def targets_from_changes(changes: Iterable[tuple[str, date, datetime | None]], since: datetime | None,
                         tz: ZoneInfo) -> set[Target]:
    """A partition (source, UTC day) written at or after `since` changes the local days overlapping that UTC day.
    since=None takes every change given (first run)."""
    return {(source, local)
            for source, utc_day, written_at in changes
            if since is None or (written_at is not None and written_at >= since)
            for local in local_days_of_utc_day(utc_day, tz)}


def partition_keys(targets: Iterable[Target], tz: ZoneInfo) -> list[PartitionKey]:
    return sorted({(source, u) for source, day in targets for u in utc_days_of_local_day(day, tz)})


def days_if_every_source(targets: Iterable[Target]) -> list[date] | None:
    """The targets' local days when every source of the targets has all of them (explicit days usually): then,
    of the partitions partition_keys reads, "local day is one of these" keeps exactly the targets' readings, a
    plain filter. None otherwise: readings must be matched by (source, local day)."""
    targets = set(targets)
    sources, days = {s for s, _ in targets}, sorted({d for _, d in targets})
    return days if len(targets) == len(sources) * len(days) else None


def is_its_utc_day(day: date, tz: ZoneInfo) -> bool:
    """The local day is exactly the UTC day of the same date (a zone at UTC+0 that day, without a DST change)."""
    start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    return local_day_window(day, tz) == (start, start + timedelta(days=1))


def windows_of_days(days: Iterable[date], tz: ZoneInfo) -> list[tuple[datetime, datetime]]:
    """[start, end) UTC instants of the local days, consecutive days merged into one window."""
    out: list[tuple[datetime, datetime]] = []
    for day in sorted(set(days)):
        start, end = local_day_window(day, tz)
        if out and out[-1][1] == start:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


@dataclass(frozen=True)
class Keep:
    """How the readings of partition_keys(targets) are narrowed to the targets' (source, local day) readings.
    kind "partitions": every target day is its own UTC day, so the partitions read are the targets themselves:
      the partition key's day is the local day (readings.day is the UTC date of ts, the table's contract) and no
      reading needs a filter or a time-zone conversion.
    kind "windows": every source has every day: readings whose ts is in `windows` (UTC instants), a range filter.
    kind "join": otherwise readings are matched to the targets by (source, local day)."""
    kind: str
    windows: tuple[tuple[datetime, datetime], ...] = ()


def keep_plan(targets: Iterable[Target], tz: ZoneInfo) -> Keep:
    targets = set(targets)
    if all(is_its_utc_day(day, tz) for day in {d for _, d in targets}):
        return Keep("partitions")
    days = days_if_every_source(targets)
    if days is not None:
        return Keep("windows", tuple(windows_of_days(days, tz)))
    return Keep("join")


def change_buckets(since: datetime, now: datetime) -> list[datetime]:
    """The hourly day_changes partitions that can hold a write made in [since, now]."""
    hour = since.replace(minute=0, second=0, microsecond=0)
    out = []
    while hour <= now:
        out.append(hour)
        hour += timedelta(hours=1)
    return out
