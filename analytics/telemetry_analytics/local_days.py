"""Local days in an IANA time zone and the UTC day partitions of `readings` they cover.

readings is partitioned by (source, UTC day). A local day is the interval [local midnight, next local midnight),
which lasts 23, 24 or 25 hours (DST) and overlaps one UTC day (zones at UTC+0) or two.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

UTC = timezone.utc


class BadInput(ValueError):
    """A user-facing error: the message is printed as is and the command exits non-zero."""


class NotFound(LookupError):
    """A named thing (a source) that the data does not know: the message is printed as is, exit code 1."""


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise BadInput(f"unknown time zone {name!r} (expected an IANA name such as UTC or Europe/Zagreb)") from None


def parse_day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise BadInput(f"bad date {text!r} (expected YYYY-MM-DD)") from None


def parse_month(text: str) -> tuple[date, date]:
    """'2026-03' → (first day, last day) of that month."""
    try:
        first = datetime.strptime(text, "%Y-%m").date()
    except ValueError:
        raise BadInput(f"bad month {text!r} (expected YYYY-MM)") from None
    next_first = (first.replace(day=28) + timedelta(days=4)).replace(day=1)
    return first, next_first - timedelta(days=1)


def day_range(first: date, last: date) -> list[date]:
    if last < first:
        raise BadInput(f"--to {last} is before --from {first}")
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


def local_day_window(day: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """[start, end) of a local day as UTC datetimes. A midnight skipped by DST resolves (fold=0) to the
    transition instant, which is where that day really starts."""
    start = datetime(day.year, day.month, day.day, tzinfo=tz)
    nxt = day + timedelta(days=1)
    end = datetime(nxt.year, nxt.month, nxt.day, tzinfo=tz)
    return start.astimezone(UTC), end.astimezone(UTC)


def utc_days_of_local_day(day: date, tz: ZoneInfo) -> list[date]:
    """The UTC day partitions that hold readings of this local day (one or two)."""
    start, end = local_day_window(day, tz)
    last = (end - timedelta(microseconds=1)).date()
    return day_range(start.date(), last)


def local_days_of_utc_day(day: date, tz: ZoneInfo) -> list[date]:
    """The local days that overlap a UTC day: those whose aggregates change when that partition changes."""
    start = datetime(day.year, day.month, day.day, tzinfo=UTC)
    end = start + timedelta(days=1) - timedelta(microseconds=1)
    return day_range(start.astimezone(tz).date(), end.astimezone(tz).date())


def local_day_of(ts_ms: int, tz: ZoneInfo) -> date:
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC).astimezone(tz).date()


def hours_in_local_day(day: date, tz: ZoneInfo) -> float:
    start, end = local_day_window(day, tz)
    return (end - start).total_seconds() / 3600
