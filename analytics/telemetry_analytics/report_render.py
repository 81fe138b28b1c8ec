"""The report as Markdown, as a self-contained HTML page with inline SVG charts, and as a terminal summary.
Pure: a report dict (report_model.build_report) in, text out."""

from __future__ import annotations

from datetime import datetime
from html import escape
from zoneinfo import ZoneInfo

from .report_charts import compare_chart, source_charts
from .sample_period import overall

COMPLETENESS = ("complete: frames received ÷ frames expected, at most 100 %. Expected: the whole local day's hours "
                "(today: until the report ran) ÷ the source's sample period, which is the median interval between "
                "its consecutive frames over the report's days (observed) or the one set in the report config "
                "(configured). A board that stops, or starts, at noon shows 50 %.")


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
    """(label, value) rows shared by the Markdown and HTML tables: each source's headline figures."""
    tz, c = report["time_zone"], report["config"]
    unit = c["units"].get(c["inside"], "")
    rows = [("data points (readings)", str(s["readings"])), ("frames (records)", str(s["frames"])),
            ("first record", _moment(s["first"], tz)), ("last record", _moment(s["last"], tz)),
            ("sample period", _period_text(s))]
    for role in ("inside", "outside"):
        r = s[role]
        if r:
            u = c["units"].get(r["metric"], "")
            rows += [(f"lowest {role} ({r['metric']})", _moment(r["lowest"], tz, u)),
                     (f"highest {role} ({r['metric']})", _moment(r["highest"], tz, u)),
                     (f"average {role}", f"{num(r['mean'])} {u}")]
        else:
            rows.append((f"{role} ({c[role]})", "no readings"))
    d = s["difference"]
    if d:
        rows += [(f"average difference inside − outside ({d['pairs']} frames)", f"{num(d['mean'])} {unit}"),
                 ("biggest difference", _moment(d["biggest"], tz, unit))]
    out_unit = c["units"].get(c["outside"], "")
    rows.append((f"cold nights (outside below {c['cold_threshold']:g} {out_unit})", str(len(s["cold_nights"]))))
    return rows


def _gap(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def _period_text(s: dict) -> str:
    if s["sample_period_s"] is None:
        return "– (a single frame: no completeness)"
    how = ("observed: the median interval between consecutive frames" if s["sample_period_from"] == "observed"
           else "configured")
    return f"{s['sample_period_s']:.4g} s ({how})"


def day_table(s: dict, report: dict) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the per-day table shared by the Markdown and HTML pages."""
    c = report["config"]
    unit = c["units"].get(c["inside"], "")
    head = ["day", "hours", "frames / expected", "complete", "longest gap",
            f"frost < {c['frost_below']:g} {unit}", f"heat > {c['heat_above']:g} {unit}",
            f"{c['humidity']} > {c['humidity_above']:g} {c['units'].get(c['humidity'], '')}",
            f"{c['battery']} lowest ({c['units'].get(c['battery'], '')}, low < {c['low_battery_v']:g})"]
    rows = [[d["day"], f"{d['hours']:g}",
             f"{d['frames']} / {'–' if d['expected_frames'] is None else format(d['expected_frames'], 'g')}",
             "–" if d["completeness"] is None else f"{d['completeness']:.0%}",
             _gap(d["longest_gap_s"]), f"{d['frost_h']:.1f} h", f"{d['heat_h']:.1f} h", f"{d['humid_h']:.1f} h",
             "–" if d["battery_min"] is None else
             f"{d['battery_min']:g}{' LOW' if d['battery_min'] < c['low_battery_v'] else ''}"]
            for d in s["days"]]
    return head, rows


def _period(report: dict) -> str:
    return f"{report['from']} to {report['to']}, local days in {report['time_zone']}"


def markdown(report: dict) -> str:
    out = [f"# Telemetry report {report['title']}", "", _period(report), ""]
    c = report["config"]
    unit = c["units"].get(c["outside"], "")
    for s in report["sources"]:
        out += [f"## {s['source']}", "", "| figure | value |", "| --- | --- |"]
        out += [f"| {k} | {v} |" for k, v in _facts(s, report)]
        if s["cold_nights"]:
            out += ["", f"### Cold nights ({c['night_start']}–{c['night_end']}, outside below "
                        f"{c['cold_threshold']:g} {unit})", "",
                    "| night of | readings below | lowest |", "| --- | --- | --- |"]
            out += [f"| {n['night']} | {n['readings_below']} | {_moment(n['lowest'], report['time_zone'], unit)} |"
                    for n in s["cold_nights"]]
        head, rows = day_table(s, report)
        out += ["", "### Per day", "", "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        out += ["", COMPLETENESS]
        out += ["", "### Metrics", "", "| metric | unit | readings | min | max | mean |",
                "| --- | --- | --- | --- | --- | --- |"]
        out += [f"| {m} | {c['units'].get(m, '')} | {v['count']} | {v['min']:g} | {v['max']:g} | {num(v['mean'], 3)} |"
                for m, v in s["metrics"].items()]
        out.append("")
    if not report["sources"]:
        out.append("No readings in this period.")
    return "\n".join(out) + "\n"


STYLE = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;
font-size:14px}th{background:#f3f3f3}td:first-child{white-space:nowrap}.charts{display:flex;flex-wrap:wrap;gap:8px}
svg.chart{background:#fff;border:1px solid #ddd}svg text{font-size:11px;fill:#444}
svg text.title{font-size:13px;font-weight:600;fill:#222}svg line.grid{stroke:#e5e5e5}
p.note{font-size:13px;color:#555;max-width:900px}
"""


def html(report: dict) -> str:
    c, tz = report["config"], report["time_zone"]
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8>"
             f"<title>Telemetry report {escape(report['title'])}</title><style>{STYLE}</style></head><body>",
             f"<h1>Telemetry report {escape(report['title'])}</h1><p>{escape(_period(report))}</p>"]
    if report["sources"]:
        parts.append(f"<section><h2>Sources compared</h2><div class=charts>{compare_chart(report)}</div></section>")
    for s in report["sources"]:
        parts.append(f"<section class=source><h2>{escape(s['source'])}</h2><table>")
        parts += [f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in _facts(s, report)]
        parts.append("</table>")
        parts += ["<div class=charts>", *source_charts(s, report), "</div>"]
        head, rows = day_table(s, report)
        parts.append("<h3>Per day</h3><table class=days>"
                     + "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"
                     + "".join(f"<tr data-day={r[0]}>" + "".join(f"<td>{escape(v)}</td>" for v in r) + "</tr>"
                               for r in rows) + "</table>"
                     + f"<p class=note>{escape(COMPLETENESS)}</p>")
        unit = c["units"].get(c["outside"], "")
        if s["cold_nights"]:
            parts.append(f"<h3>Cold nights</h3><table><tr><th>night of</th><th>readings below "
                         f"{c['cold_threshold']:g} {escape(unit)}</th><th>lowest</th></tr>")
            parts += [f"<tr><td>{n['night']}</td><td>{n['readings_below']}</td>"
                      f"<td>{escape(_moment(n['lowest'], tz, unit))}</td></tr>" for n in s["cold_nights"]]
            parts.append("</table>")
        parts.append("</section>")
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
        share = overall(s["days"])
        if share is not None:
            parts.append(f"{share:.0%} of the expected frames")
        lines.append(f"  {s['source']}: " + ", ".join(parts))
    return "\n".join(lines)
