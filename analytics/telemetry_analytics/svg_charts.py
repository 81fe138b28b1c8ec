"""Inline SVG charts for the self-contained HTML report, every one placed by time.

Hand-written SVG rather than a chart library: the page must work offline with nothing fetched, and the chart kinds
needed (min–max bands with mean lines broken at gaps, threshold lines, bars per day) are a page of SVG; the Python
chart libraries that emit SVG either lack a band chart (pygal) or bring numpy and a rendering stack (matplotlib).

Each mean line of a segment is one <polyline> with data-points (its point count) and data-t0/data-t1 (first and
last instant, epoch ms), so a reader or a test can count what is drawn against the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from html import escape
from typing import Sequence
from zoneinfo import ZoneInfo

from .intraday import segments
from .time_axis import ticks as time_ticks

W, H = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 28, 36
BAND_FILL = "#9ecae1"
MEAN_STROKE = "#08519c"
BAR_FILL = "#74c476"
LINE_STROKE = "#d62728"
PALETTE = ("#08519c", "#e6550d", "#31a354", "#756bb1", "#636363", "#d6616b", "#8c6d31", "#17becf")


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step) * step
    ticks, t = [], first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 10))
        t += step
    if ticks[-1] < hi:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


@dataclass(frozen=True)
class Series:
    """One line (and optionally its min–max band) over time: t ascending epoch ms."""
    label: str
    t: Sequence[int]
    mean: Sequence[float]
    lo: Sequence[float] | None = None
    hi: Sequence[float] | None = None
    colour: str = MEAN_STROKE


@dataclass(frozen=True)
class Line:
    """A horizontal threshold line."""
    value: float
    label: str


class _Frame:
    """Maps time (epoch ms) and value to pixels."""

    def __init__(self, start_ms: int, end_ms: int, ticks: list[float]):
        self.start, self.span = start_ms, max(1, end_ms - start_ms)
        self.lo, self.hi = ticks[0], ticks[-1]

    def x(self, ms: float) -> float:
        return LEFT + (W - LEFT - RIGHT) * (ms - self.start) / self.span

    def y(self, v: float) -> float:
        return TOP + (H - TOP - BOTTOM) * (1 - (v - self.lo) / (self.hi - self.lo))


def _axes(f: _Frame, ticks: list[float], end_ms: int, tz: ZoneInfo, title: str, unit: str) -> list[str]:
    out = [f'<text x="{LEFT}" y="18" class="title">{escape(title)}</text>']
    for t in ticks:
        y = f.y(t)
        out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{t:g}</text>')
    if unit:
        out.append(f'<text x="8" y="{TOP - 8}">{escape(unit)}</text>')
    for ms, label in time_ticks(f.start, end_ms, tz):
        x = f.x(ms)
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{H - BOTTOM + 4}" class="grid" data-t="{ms}"/>')
        out.append(f'<text x="{x:.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">{escape(label)}</text>')
    return out


def _svg(kind: str, title: str, body: list[str], attrs: dict[str, object]) -> str:
    extra = "".join(f' data-{k}="{escape(str(v))}"' for k, v in attrs.items())
    return (f'<svg class="chart {kind}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
            f'aria-label="{escape(title)}"{extra} xmlns="http://www.w3.org/2000/svg">' + "".join(body) + "</svg>")


def _no_data(kind: str, title: str, attrs: dict[str, object]) -> str:
    return _svg(kind, title, [f'<text x="{LEFT}" y="40">{escape(title)}: no data</text>'], {**attrs, "points": 0})


def _pts(f: _Frame, ts: Sequence[int], vs: Sequence[float]) -> list[str]:
    return [f"{f.x(t):.1f},{f.y(v):.1f}" for t, v in zip(ts, vs)]


def _segment(f: _Frame, s: Series, i: int, j: int) -> list[str]:
    out = []
    ts = s.t[i:j]
    if s.lo is not None and s.hi is not None:
        if j - i == 1:
            x = f.x(ts[0])
            out.append(f'<line class="band" x1="{x:.1f}" x2="{x:.1f}" y1="{f.y(s.hi[i]):.1f}" '
                       f'y2="{f.y(s.lo[i]):.1f}" stroke="{BAND_FILL}" stroke-width="3"/>')
        else:
            ring = _pts(f, ts, s.hi[i:j]) + _pts(f, ts[::-1], s.lo[i:j][::-1])
            out.append(f'<polygon class="band" points="{" ".join(ring)}" fill="{BAND_FILL}"/>')
    out.append(f'<polyline class="mean" data-series="{escape(s.label)}" data-points="{j - i}" data-t0="{ts[0]}" '
               f'data-t1="{ts[-1]}" points="{" ".join(_pts(f, ts, s.mean[i:j]))}" fill="none" '
               f'stroke="{s.colour}" stroke-width="1.5"/>')
    if j - i == 1:  # a lone point draws no line
        out.append(f'<circle cx="{f.x(ts[0]):.1f}" cy="{f.y(s.mean[i]):.1f}" r="2" fill="{s.colour}"/>')
    return out


def time_chart(kind: str, title: str, start_ms: int, end_ms: int, tz: ZoneInfo, series: Sequence[Series],
               max_step: int, unit: str = "", lines: Sequence[Line] = (), attrs: dict[str, object] | None = None
               ) -> str:
    """Lines (with bands where given) over [start_ms, end_ms], broken where consecutive points are more than
    max_step apart; threshold lines dashed; a legend when there are several series."""
    attrs = dict(attrs or {})
    series = [s for s in series if len(s.t)]
    if not series:
        return _no_data(kind, title, attrs)
    values = [v for s in series for v in (*(s.lo or ()), *(s.hi or ()), *s.mean)] + [ln.value for ln in lines]
    ticks = nice_ticks(min(values), max(values))
    f = _Frame(start_ms, end_ms, ticks)
    body = _axes(f, ticks, end_ms, tz, title, unit)
    for ln in lines:
        y = f.y(ln.value)
        body.append(f'<line class="threshold" x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
                    f'stroke="{LINE_STROKE}" stroke-dasharray="5,4"/>')
        body.append(f'<text x="{W - RIGHT - 4}" y="{y - 4:.1f}" text-anchor="end">{escape(ln.label)}</text>')
    for s in series:
        for i, j in segments(s.t, max_step):
            body += _segment(f, s, i, j)
    if len(series) > 1:  # the legend, right-aligned above the plot
        x = W - RIGHT - sum(18 + 7 * len(s.label) for s in series)
        for s in series:
            body.append(f'<rect x="{x}" y="9" width="10" height="10" fill="{s.colour}"/>'
                        f'<text x="{x + 14}" y="18">{escape(s.label)}</text>')
            x += 18 + 7 * len(s.label)
    return _svg(kind, title, body, {**attrs, "points": sum(len(s.t) for s in series)})


def day_bars(title: str, start_ms: int, end_ms: int, tz: ZoneInfo,
             bars: Sequence[tuple[date, int, int, int]], attrs: dict[str, object] | None = None) -> str:
    """One bar per (day, day start ms, day end ms, count), as wide as most of its day: a missing day is a gap."""
    attrs = dict(attrs or {})
    if not bars:
        return _no_data("bars", title, attrs)
    ticks = nice_ticks(0, max(b[3] for b in bars) or 1)
    f = _Frame(start_ms, end_ms, ticks)
    body = _axes(f, ticks, end_ms, tz, title, "")
    for day, d0, d1, count in bars:
        x0, x1 = f.x(d0 + (d1 - d0) * 0.15), f.x(d1 - (d1 - d0) * 0.15)
        top = f.y(count)
        body.append(f'<rect class="bar" data-day="{day}" x="{x0:.1f}" y="{top:.1f}" width="{max(1.0, x1 - x0):.1f}" '
                    f'height="{f.y(0) - top:.1f}" fill="{BAR_FILL}"><title>{day}: {count}</title></rect>')
    return _svg("bars", title, body, {**attrs, "points": len(bars)})
