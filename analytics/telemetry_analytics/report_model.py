"""The report's figures, computed from what the Spark job collected (pure, JSON-ready).

Inputs, all small: per (source, local day, metric) aggregates (the daily_summary columns), per source the frame
count and the inside−outside difference statistics, the cold-night rows, and the full records (all metric values of
one source at one ts) of the moments the report names. Ties between equal values go to the earliest reading.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import fields
from datetime import date, datetime, timezone
from typing import Any, Iterable

from .day_figures import bucket_series, day_rows
from .local_days import zone
from .sample_period import source_period

UTC = timezone.utc


def iso(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def lowest(rows: Iterable[dict]) -> tuple[float, datetime] | None:
    return min(((r["min"], r["min_ts"]) for r in rows), default=None)


def highest(rows: Iterable[dict]) -> tuple[float, datetime] | None:
    best = min(((-r["max"], r["max_ts"]) for r in rows), default=None)
    return (-best[0], best[1]) if best else None


def pooled_mean(rows: list[dict]) -> float | None:
    n = sum(r["count"] for r in rows)
    return sum(r["mean"] * r["count"] for r in rows) / n if n else None


def record_keys(config, daily: list[dict], diffs: dict[str, dict], cold: list[dict]) -> set[tuple[str, datetime]]:
    """The (source, ts) moments whose full record the report prints."""
    keys = set()
    for source, rows in _by_source(daily).items():
        keys.add((source, min(r["first_ts"] for r in rows)))
        keys.add((source, max(r["last_ts"] for r in rows)))
        for metric in (config.inside, config.outside):
            of_metric = [r for r in rows if r["metric"] == metric]
            for extreme in (lowest(of_metric), highest(of_metric)):
                if extreme:
                    keys.add((source, extreme[1]))
    keys |= {(s, d["biggest_ts"]) for s, d in diffs.items() if d.get("biggest_ts")}
    keys |= {(c["source"], c["lowest_ts"]) for c in cold}
    return keys


def _by_source(daily: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for r in daily:
        out[r["source"]].append(r)
    return out


def _moment(source: str, value: float | None, ts: datetime, records: dict) -> dict[str, Any]:
    out: dict[str, Any] = {"ts": iso(ts), "record": records.get((source, ts), {})}
    if value is not None:
        out = {"value": value, **out}
    return out


def _role(source: str, metric: str, rows: list[dict], records: dict) -> dict[str, Any] | None:
    of_metric = [r for r in rows if r["metric"] == metric]
    if not of_metric:
        return None
    lo, hi = lowest(of_metric), highest(of_metric)
    return {"metric": metric, "mean": pooled_mean(of_metric),
            "lowest": _moment(source, lo[0], lo[1], records), "highest": _moment(source, hi[0], hi[1], records)}


def build_report(config, title: str, tz: str, days: list[date], daily: list[dict], frames: dict[str, int],
                 diffs: dict[str, dict], cold: list[dict], records: dict, buckets: Iterable[dict] = (),
                 day_frames: dict[tuple[str, date], int] | None = None,
                 now_ms: int | None = None, periods_ms: dict[str, float | None] | None = None
                 ) -> dict[str, Any]:
    """buckets: 5-minute rows (source, metric, bucket epoch ms, min, mean, max, count); day_frames: frames per
    (source, local day); periods_ms: per source the median interval between its consecutive frames over the
    period; now_ms: when the report runs (today's completeness counts the frames expected so far)."""
    series = bucket_series(buckets)
    sources = []
    for source, rows in sorted(_by_source(daily).items()):
        metrics = {}
        for metric in sorted({r["metric"] for r in rows}):
            of_metric = sorted((r for r in rows if r["metric"] == metric), key=lambda r: r["day"])
            lo, hi = lowest(of_metric), highest(of_metric)
            metrics[metric] = {
                "count": sum(r["count"] for r in of_metric), "mean": pooled_mean(of_metric),
                "min": lo[0], "min_ts": iso(lo[1]), "max": hi[0], "max_ts": iso(hi[1]),
                "daily": [{"day": r["day"].isoformat(), "count": r["count"], "min": r["min"], "max": r["max"],
                           "mean": r["mean"]} for r in of_metric],
            }
        diff = diffs.get(source)
        difference = None
        if diff and diff["pairs"]:
            difference = {"pairs": diff["pairs"], "mean": diff["mean"],
                          "biggest": _moment(source, diff["biggest"], diff["biggest_ts"], records)}
        nights = [{"night": c["night"].isoformat(), "readings_below": c["below"],
                   "lowest": _moment(source, c["lowest"], c["lowest_ts"], records)}
                  for c in sorted((c for c in cold if c["source"] == source), key=lambda c: c["night"])]
        period_s, period_from = source_period(config, source, (periods_ms or {}).get(source))
        per_day: dict[date, int] = defaultdict(int)
        for r in rows:
            per_day[r["day"]] += r["count"]
        sources.append({
            "source": source,
            "readings": sum(r["count"] for r in rows),
            "frames": frames.get(source, 0),
            "first": _moment(source, None, min(r["first_ts"] for r in rows), records),
            "last": _moment(source, None, max(r["last_ts"] for r in rows), records),
            "inside": _role(source, config.inside, rows, records),
            "outside": _role(source, config.outside, rows, records),
            "difference": difference,
            "cold_nights": nights,
            "readings_per_day": [{"day": d.isoformat(), "readings": n} for d, n in sorted(per_day.items())],
            "sample_period_s": period_s, "sample_period_from": period_from,
            "days": day_rows(source, days, zone(tz), config, series, day_frames or {}, rows, now_ms, period_s),
            "metrics": metrics,
            "intraday": {m: {k: v for k, v in s.items() if k != "count"}
                         for (src, m), s in sorted(series.items()) if src == source},
        })
    return {
        "title": title, "time_zone": tz, "from": days[0].isoformat(), "to": days[-1].isoformat(),
        "config": {**{f.name: getattr(config, f.name) for f in fields(config)}, "units": dict(config.units),
                   "sample_periods": dict(config.sample_periods),
                   "sources": list(config.sources), "night_start": config.night_start.strftime("%H:%M"),
                   "night_end": config.night_end.strftime("%H:%M")},
        "sources": sources,
    }
