"""Intraday series (pure): 5-minute buckets of one source and metric, split into segments at gaps, time above or
below a threshold per local day (a day's completeness: sample_period.py).

A bucket is [b, b + 5 min) of UTC instants (epoch ms a multiple of BUCKET_MS), so a DST change neither merges nor
drops buckets; only labels are local. Consecutive buckets more than `max_step_ms` apart have a gap between them: the
chart breaks its line there and the gap counts as no time at all.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Callable, Sequence
from zoneinfo import ZoneInfo

from .local_days import local_day_of

BUCKET_MS = 300_000


def cover_ms(sample_period_s: float) -> int:
    """The time one bucket with data stands for at least: a bucket, or one sample period if frames are rarer."""
    return max(BUCKET_MS, round(sample_period_s * 1000))


def max_step_ms(sample_period_s: float) -> int:
    """The longest step between buckets that is not a gap: two sample periods (or buckets), so one lost frame or
    a frame's jitter across a bucket boundary does not break the line, and two lost frames do."""
    return 2 * cover_ms(sample_period_s)


def segments(ts: Sequence[int], max_step: int) -> list[tuple[int, int]]:
    """[start, end) index ranges of the runs of an ascending series whose steps are at most max_step."""
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(ts) + 1):
        if i == len(ts) or ts[i] - ts[i - 1] > max_step:
            out.append((start, i))
            start = i
    return out if ts else []


def covered(ts: Sequence[int], max_step: int, cover: int) -> list[int]:
    """Per bucket, the time it stands for: up to the next bucket, or `cover` before a gap and at the end."""
    return [nxt - t if nxt - t <= max_step else cover for t, nxt in zip(ts, ts[1:])] + ([cover] if ts else [])


def hours_where(ts: Sequence[int], values: Sequence[float], predicate: Callable[[float], bool], max_step: int,
                cover: int, tz: ZoneInfo) -> dict[date, float]:
    """Hours per local day (of the bucket's start) of the buckets whose value satisfies the predicate."""
    out: dict[date, float] = defaultdict(float)
    for t, value, span in zip(ts, values, covered(ts, max_step, cover)):
        if predicate(value):
            out[local_day_of(t, tz)] += span / 3_600_000
    return dict(out)
