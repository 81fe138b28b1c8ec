"""The report's charts (pure): a report dict (report_model.build_report) in, inline SVG out. Every chart spans the
report's local days on a time axis in the report's zone: intraday 5-minute min–max bands with mean lines, the daily
bands, readings per day, and the sources side by side for one metric."""

from __future__ import annotations

from datetime import date, timedelta
from zoneinfo import ZoneInfo

from .intraday import max_step_ms
from .sample_period import FALLBACK_PERIOD_S
from .svg_charts import PALETTE, Line, Series, day_bars, time_chart
from .time_axis import local_midnight_ms

DAY_STEP_MS = 36 * 3_600_000  # consecutive days' middles are 23–25 h apart; a missing day makes it 47 h or more


def period(report: dict) -> tuple[ZoneInfo, int, int]:
    tz = ZoneInfo(report["time_zone"])
    last = date.fromisoformat(report["to"]) + timedelta(days=1)
    return tz, local_midnight_ms(date.fromisoformat(report["from"]), tz), local_midnight_ms(last, tz)


def thresholds(metric: str, c: dict) -> list[Line]:
    """The config's thresholds that apply to a metric, drawn on its charts."""
    unit = c["units"].get(metric, "")
    lines = []
    if metric == c["inside"]:
        lines += [Line(c["frost_below"], f"frost {c['frost_below']:g} {unit}"),
                  Line(c["heat_above"], f"heat {c['heat_above']:g} {unit}")]
    if metric == c["outside"]:
        lines.append(Line(c["cold_threshold"], f"cold night {c['cold_threshold']:g} {unit}"))
    if metric == c["humidity"]:
        lines.append(Line(c["humidity_above"], f"humid {c['humidity_above']:g} {unit}"))
    if metric == c["battery"]:
        lines.append(Line(c["low_battery_v"], f"low battery {c['low_battery_v']:g} {unit}"))
    return lines


def _midday(day: str, tz: ZoneInfo) -> int:
    d = date.fromisoformat(day)
    start, end = local_midnight_ms(d, tz), local_midnight_ms(d + timedelta(days=1), tz)
    return (start + end) // 2


def source_charts(s: dict, report: dict) -> list[str]:
    c = report["config"]
    tz, start, end = period(report)
    bars = [(date.fromisoformat(r["day"]), local_midnight_ms(date.fromisoformat(r["day"]), tz),
             local_midnight_ms(date.fromisoformat(r["day"]) + timedelta(days=1), tz), r["readings"])
            for r in s["readings_per_day"]]
    out = [day_bars(f"{s['source']} · readings per day", start, end, tz, bars, {"source": s["source"]})]
    for metric, v in s["metrics"].items():  # per metric its intraday chart, then its daily one
        ser = s["intraday"].get(metric, {"t": [], "mean": [], "min": [], "max": []})
        out.append(time_chart("intraday", f"{s['source']} · {metric}: 5-minute min–max and mean", start, end, tz,
                              [Series(metric, ser["t"], ser["mean"], ser["min"], ser["max"])],
                              max_step_ms(s["sample_period_s"] or FALLBACK_PERIOD_S), c["units"].get(metric, ""),
                              thresholds(metric, c),
                              {"source": s["source"], "metric": metric}))
        d = v["daily"]
        out.append(time_chart("daily", f"{s['source']} · {metric}: daily min–max and mean", start, end, tz,
                              [Series(metric, [_midday(r["day"], tz) for r in d], [r["mean"] for r in d],
                                      [r["min"] for r in d], [r["max"] for r in d])],
                              DAY_STEP_MS, c["units"].get(metric, ""), thresholds(metric, c),
                              {"source": s["source"], "metric": metric}))
    return out


def compare_chart(report: dict) -> str:
    """The 5-minute means of compare_metric, one line per source."""
    c = report["config"]
    metric = c["compare_metric"]
    tz, start, end = period(report)
    shown = [s for s in report["sources"] if metric in s["intraday"]]
    series = [Series(s["source"], s["intraday"][metric]["t"], s["intraday"][metric]["mean"],
                     colour=PALETTE[i % len(PALETTE)]) for i, s in enumerate(shown)]
    # one gap rule for all lines: the slowest source's, so that no source's line breaks between its own frames
    step = max_step_ms(max((s["sample_period_s"] or FALLBACK_PERIOD_S for s in shown), default=FALLBACK_PERIOD_S))
    return time_chart("compare", f"sources compared · {metric}: 5-minute means", start, end, tz, series, step, c["units"].get(metric, ""), thresholds(metric, c),
                      {"metric": metric})
