"""Inline SVG charts for the self-contained HTML report.

Hand-written SVG rather than a chart library: the page must work offline with nothing fetched, and the two chart
kinds needed (a min–max band with a mean line, and daily bars) are ~100 lines of SVG; the Python chart libraries
that emit SVG either lack a band chart (pygal) or bring numpy and a rendering stack (matplotlib) for it.
"""

from __future__ import annotations

import math
from datetime import date
from html import escape

W, H = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 28, 36
BAND_FILL = "#9ecae1"
MEAN_STROKE = "#08519c"
BAR_FILL = "#74c476"


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


class _Frame:
    """Maps day index and value to pixels."""

    def __init__(self, n: int, ticks: list[float]):
        self.n, self.lo, self.hi = n, ticks[0], ticks[-1]

    def x(self, i: float) -> float:
        inner = W - LEFT - RIGHT
        return LEFT + (inner * (i + 0.5) / self.n if self.n else 0)

    def y(self, v: float) -> float:
        return TOP + (H - TOP - BOTTOM) * (1 - (v - self.lo) / (self.hi - self.lo))


def _axes(f: _Frame, ticks: list[float], days: list[date], title: str, unit: str) -> list[str]:
    out = [f'<text x="{LEFT}" y="18" class="title">{escape(title)}</text>']
    for t in ticks:
        y = f.y(t)
        out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{t:g}</text>')
    if unit:
        out.append(f'<text x="12" y="{TOP - 8}" >{escape(unit)}</text>')
    step = max(1, math.ceil(len(days) / 10))
    for i in range(0, len(days), step):
        out.append(f'<text x="{f.x(i):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">{days[i]:%m-%d}</text>')
    return out


def _svg(kind: str, title: str, body: list[str]) -> str:
    return (f'<svg class="chart {kind}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
            f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">' + "".join(body) + "</svg>")


def band_chart(title: str, days: list[date], mins: list[float], maxs: list[float], means: list[float],
               unit: str = "") -> str:
    """Per day: a shaded band from min to max and a line through the means."""
    if not days:
        return _svg("band", title, [f'<text x="{LEFT}" y="40">{escape(title)}: no data</text>'])
    ticks = nice_ticks(min(mins), max(maxs))
    f = _Frame(len(days), ticks)
    upper = [f"{f.x(i):.1f},{f.y(v):.1f}" for i, v in enumerate(maxs)]
    lower = [f"{f.x(i):.1f},{f.y(v):.1f}" for i, v in reversed(list(enumerate(mins)))]
    body = _axes(f, ticks, days, title, unit)
    if len(days) == 1:  # a band needs two points: draw the day as a bar from min to max
        x = f.x(0)
        body.append(f'<rect class="band" x="{x - 8:.1f}" y="{f.y(maxs[0]):.1f}" width="16" '
                    f'height="{max(1.0, f.y(mins[0]) - f.y(maxs[0])):.1f}" fill="{BAND_FILL}"/>')
    else:
        body.append(f'<polygon class="band" points="{" ".join(upper + lower)}" fill="{BAND_FILL}"/>')
    mean_points = " ".join(f"{f.x(i):.1f},{f.y(v):.1f}" for i, v in enumerate(means))
    body.append(f'<polyline class="mean" points="{mean_points}" fill="none" stroke="{MEAN_STROKE}" '
                f'stroke-width="2"/>')
    body += [f'<circle cx="{f.x(i):.1f}" cy="{f.y(v):.1f}" r="2.5" fill="{MEAN_STROKE}"/>'
             for i, v in enumerate(means)]
    return _svg("band", title, body)


def bar_chart(title: str, days: list[date], counts: list[int]) -> str:
    if not days:
        return _svg("bars", title, [f'<text x="{LEFT}" y="40">{escape(title)}: no data</text>'])
    ticks = nice_ticks(0, max(counts) or 1)
    f = _Frame(len(days), ticks)
    width = max(1.0, (W - LEFT - RIGHT) / len(days) * 0.7)
    body = _axes(f, ticks, days, title, "")
    for i, c in enumerate(counts):
        top = f.y(c)
        body.append(f'<rect class="bar" x="{f.x(i) - width / 2:.1f}" y="{top:.1f}" width="{width:.1f}" '
                    f'height="{f.y(0) - top:.1f}" fill="{BAR_FILL}"><title>{days[i]}: {c}</title></rect>')
    return _svg("bars", title, body)
