"""The report as Markdown, as a self-contained HTML page with inline SVG charts, and as a terminal summary.
Pure: a report dict (report_model.build_report) in, text out."""

from __future__ import annotations

from datetime import date, datetime
from html import escape
from zoneinfo import ZoneInfo

from .svg_charts import band_chart, bar_chart


def local_time(iso_ts: str, tz: str) -> str:
    ts = datetime.fromisoformat(iso_ts.replace("Z", "+00:00")).astimezone(ZoneInfo(tz))
    return ts.strftime("%Y-%m-%d %H:%M:%S %Z")


def record_text(record: dict[str, float]) -> str:
    return ", ".join(f"{m}={v:g}" for m, v in sorted(record.items())) or "(no record)"


def num(v: float | None, digits: int = 2) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _moment(m: dict | None, tz: str, unit: str = "") -> str:
    if not m:
        return "–"
    value = f"{m['value']:g} {unit} at ".lstrip() if "value" in m else ""
    return f"{value}{local_time(m['ts'], tz)} ({record_text(m['record'])})"


def _facts(s: dict, report: dict) -> list[tuple[str, str]]:
    """(label, value) rows shared by the Markdown and HTML tables: the original job's figures."""
    tz, c = report["time_zone"], report["config"]
    unit = c["unit"]
    rows = [("data points (readings)", str(s["readings"])), ("frames (records)", str(s["frames"])),
            ("first record", _moment(s["first"], tz)), ("last record", _moment(s["last"], tz))]
    for role in ("inside", "outside"):
        r = s[role]
        if r:
            rows += [(f"lowest {role} ({r['metric']})", _moment(r["lowest"], tz, unit)),
                     (f"highest {role} ({r['metric']})", _moment(r["highest"], tz, unit)),
                     (f"average {role}", f"{num(r['mean'])} {unit}")]
        else:
            rows.append((f"{role} ({c[role]})", "no readings"))
    d = s["difference"]
    if d:
        rows += [(f"average difference inside − outside ({d['pairs']} frames)", f"{num(d['mean'])} {unit}"),
                 ("biggest difference", _moment(d["biggest"], tz, unit))]
    rows.append((f"cold nights (outside below {c['cold_threshold']:g} {unit})", str(len(s["cold_nights"]))))
    return rows


def _period(report: dict) -> str:
    return f"{report['from']} to {report['to']}, local days in {report['time_zone']}"


def markdown(report: dict) -> str:
    out = [f"# Telemetry report {report['title']}", "", _period(report), ""]
    c = report["config"]
    for s in report["sources"]:
        out += [f"## {s['source']}", "", "| figure | value |", "| --- | --- |"]
        out += [f"| {k} | {v} |" for k, v in _facts(s, report)]
        if s["cold_nights"]:
            out += ["", f"### Cold nights ({c['night_start']}–{c['night_end']}, outside below "
                        f"{c['cold_threshold']:g} {c['unit']})", "",
                    "| night of | readings below | lowest |", "| --- | --- | --- |"]
            out += [f"| {n['night']} | {n['readings_below']} | {_moment(n['lowest'], report['time_zone'], c['unit'])} |"
                    for n in s["cold_nights"]]
        out += ["", "### Metrics", "", "| metric | readings | min | max | mean |", "| --- | --- | --- | --- | --- |"]
        out += [f"| {m} | {v['count']} | {v['min']:g} | {v['max']:g} | {num(v['mean'], 3)} |"
                for m, v in s["metrics"].items()]
        out.append("")
    if not report["sources"]:
        out.append("No readings in this period.")
    return "\n".join(out) + "\n"


STYLE = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;
font-size:14px}th{background:#f3f3f3}.charts{display:flex;flex-wrap:wrap;gap:8px}
svg.chart{background:#fff;border:1px solid #ddd}svg text{font-size:11px;fill:#444}
svg text.title{font-size:13px;font-weight:600;fill:#222}svg line.grid{stroke:#e5e5e5}
"""


def html(report: dict) -> str:
    c, tz = report["config"], report["time_zone"]
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8>"
             f"<title>Telemetry report {escape(report['title'])}</title><style>{STYLE}</style></head><body>",
             f"<h1>Telemetry report {escape(report['title'])}</h1><p>{escape(_period(report))}</p>"]
    for s in report["sources"]:
        parts.append(f"<section class=source><h2>{escape(s['source'])}</h2><table>")
        parts += [f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in _facts(s, report)]
        parts.append("</table>")
        if s["cold_nights"]:
            parts.append(f"<h3>Cold nights</h3><table><tr><th>night of</th><th>readings below "
                         f"{c['cold_threshold']:g} {escape(c['unit'])}</th><th>lowest</th></tr>")
            parts += [f"<tr><td>{n['night']}</td><td>{n['readings_below']}</td>"
                      f"<td>{escape(_moment(n['lowest'], tz, c['unit']))}</td></tr>" for n in s["cold_nights"]]
            parts.append("</table>")
        parts.append("<div class=charts>")
        per_day = s["readings_per_day"]
        parts.append(bar_chart(f"{s['source']} · readings per day", [date.fromisoformat(d["day"]) for d in per_day],
                               [d["readings"] for d in per_day]))
        for metric, v in s["metrics"].items():
            days = [date.fromisoformat(d["day"]) for d in v["daily"]]
            unit = c["unit"] if metric in (c["inside"], c["outside"]) else ""
            parts.append(band_chart(f"{s['source']} · {metric}: daily min–max and mean", days,
                                    [d["min"] for d in v["daily"]], [d["max"] for d in v["daily"]],
                                    [d["mean"] for d in v["daily"]], unit))
        parts.append("</div></section>")
    if not report["sources"]:
        parts.append("<p>No readings in this period.</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def summary(report: dict) -> str:
    """A few lines for the terminal."""
    c = report["config"]
    lines = [f"report {report['title']} ({_period(report)}): {len(report['sources'])} source(s)"]
    for s in report["sources"]:
        parts = [f"{s['readings']} readings", f"{s['frames']} frames"]
        for role in ("inside", "outside"):
            r = s[role]
            if r:
                parts.append(f"{role} {r['lowest']['value']:g}…{r['highest']['value']:g} avg {num(r['mean'])}")
        if s["difference"]:
            parts.append(f"diff avg {num(s['difference']['mean'])} max {s['difference']['biggest']['value']:g}")
        parts.append(f"{len(s['cold_nights'])} cold night(s) below {c['cold_threshold']:g}")
        lines.append(f"  {s['source']}: " + ", ".join(parts))
    return "\n".join(lines)
