"""The independent computation the Spark jobs are checked against: plain Python over the generated readings.
Same definitions (earliest reading wins ties, sample stddev, local days via zoneinfo), none of the jobs' code."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

UTC = timezone.utc


def local_dt(ts_ms: int, tz: str) -> datetime:
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC).astimezone(ZoneInfo(tz))


def daily(readings, tz: str, days: set[date] | None = None) -> dict:
    groups = defaultdict(list)
    for r in readings:
        d = local_dt(r.ts_ms, tz).date()
        if days is None or d in days:
            groups[(r.source, d, r.metric)].append((r.ts_ms, r.value))
    out = {}
    for key, pts in groups.items():
        pts.sort()
        values = [v for _, v in pts]
        lo = min(values)
        hi = max(values)
        gaps = [b[0] - a[0] for a, b in zip(pts, pts[1:])]
        out[key] = {
            "count": len(pts), "min": lo, "min_ts": next(t for t, v in pts if v == lo),
            "max": hi, "max_ts": next(t for t, v in pts if v == hi),
            "mean": math.fsum(values) / len(values),
            "stddev": statistics.stdev(values) if len(values) > 1 else None,
            "first_ts": pts[0][0], "last_ts": pts[-1][0], "max_gap_ms": max(gaps) if gaps else None,
        }
    return out


def report(readings, tz: str, days: list[date], inside: str, outside: str, threshold: float,
           night_start: time, night_end: time) -> dict:
    """Per source: the report's headline figures."""
    first, last = days[0], days[-1]
    sel = [r for r in readings if first <= local_dt(r.ts_ms, tz).date() <= last]
    out = {}
    for source in sorted({r.source for r in sel}):
        rs = [r for r in sel if r.source == source]
        frames = defaultdict(dict)
        for r in rs:
            frames[r.ts_ms][r.metric] = r.value
        ts_sorted = sorted(frames)

        def extreme(metric, pick):
            pts = sorted((r.ts_ms, r.value) for r in rs if r.metric == metric)
            v = pick(p[1] for p in pts)
            t = next(t for t, x in pts if x == v)
            return v, t

        pairs = sorted((t, f[inside] - f[outside]) for t, f in frames.items() if inside in f and outside in f)
        big = max(d for _, d in pairs)
        nights = defaultdict(list)
        for r in rs:
            if r.metric != outside or not r.value < threshold:
                continue
            lt = local_dt(r.ts_ms, tz)
            if lt.time() >= night_start:
                nights[lt.date()].append((r.value, r.ts_ms))
            elif lt.time() < night_end:
                nights[lt.date() - timedelta(days=1)].append((r.value, r.ts_ms))
        out[source] = {
            "readings": len(rs), "frames": len(frames),
            "first": (ts_sorted[0], frames[ts_sorted[0]]), "last": (ts_sorted[-1], frames[ts_sorted[-1]]),
            "inside_min": extreme(inside, min), "inside_max": extreme(inside, max),
            "outside_min": extreme(outside, min), "outside_max": extreme(outside, max),
            "inside_mean": statistics.fmean(r.value for r in rs if r.metric == inside),
            "outside_mean": statistics.fmean(r.value for r in rs if r.metric == outside),
            "diff_pairs": len(pairs), "diff_mean": statistics.fmean(d for _, d in pairs),
            "diff_max": (big, next(t for t, d in pairs if d == big)),
            "cold_nights": {n: (len(v), min(v)) for n, v in nights.items()},
            "frames_by_ts": frames,
        }
    return out


def buckets(readings, tz: str, days: list[date], bucket_ms: int = 300_000) -> dict:
    """{(source, metric): {bucket start ms: (min, mean, max, count)}} of the readings of these local days, buckets
    of UTC epoch ms."""
    first, last = days[0], days[-1]
    groups = defaultdict(list)
    for r in readings:
        if first <= local_dt(r.ts_ms, tz).date() <= last:
            groups[(r.source, r.metric, r.ts_ms // bucket_ms * bucket_ms)].append(r.value)
    out = defaultdict(dict)
    for (source, metric, start), values in groups.items():
        out[(source, metric)][start] = (min(values), math.fsum(values) / len(values), max(values), len(values))
    return dict(out)


def frames_per_day(readings, tz: str) -> dict:
    """{(source, local day): number of distinct frame timestamps}."""
    seen = defaultdict(set)
    for r in readings:
        seen[(r.source, local_dt(r.ts_ms, tz).date())].add(r.ts_ms)
    return {key: len(ts) for key, ts in seen.items()}
