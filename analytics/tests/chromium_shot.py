"""The report's charts as read from a page's DOM; the browser itself (screenshot, DOM and console) is the shared
telemetry_chromium (lib/telemetry_chromium)."""

from __future__ import annotations

from html.parser import HTMLParser

from telemetry_chromium import dom_and_console, screenshot

__all__ = ["charts", "dom_and_console", "hex_rgb", "screenshot"]


class _Charts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts: list[dict] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and "chart" in (a.get("class") or ""):
            self.charts.append({**a, "lines": [], "bars": []})
        elif tag == "polyline" and self.charts:
            self.charts[-1]["lines"].append(a)
        elif tag == "rect" and a.get("class") == "bar" and self.charts:
            self.charts[-1]["bars"].append(a)


def charts(dom: str) -> list[dict]:
    """Each <svg class="chart …"> with its attributes, its polylines ("lines") and bars ("bars")."""
    parser = _Charts()
    parser.feed(dom)
    return parser.charts


def hex_rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))
