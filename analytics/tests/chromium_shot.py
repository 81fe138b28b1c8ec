"""Headless Debian Chromium: render a local page to PNG and read its pixels back (pypng); dump a page's DOM with the
console messages it logged; the report's charts as read from that DOM."""

from __future__ import annotations

import re
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import png

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
CONSOLE = re.compile(r":CONSOLE[:(]")  # Chromium's log line of a console message, e.g. [..:INFO:CONSOLE:1] "Error: …"


def screenshot(page: Path, out: Path, width: int = 1024, height: int = 2400) -> list[tuple[int, int, int]]:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(["chromium", *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                        f"--screenshot={out}", page.resolve().as_uri()],
                       capture_output=True, text=True, timeout=120, check=True)
    w, h, rows, info = png.Reader(filename=str(out)).asRGB8()
    return [tuple(row[i:i + 3]) for row in rows for i in range(0, w * 3, 3)]


def dom_and_console(page: Path) -> tuple[str, list[str]]:
    """The DOM after load and every console message (errors such as an SVG attribute Chromium could not parse)."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(["chromium", *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                               "--dump-dom", page.resolve().as_uri()],
                              capture_output=True, text=True, timeout=120, check=True)
    return done.stdout, [line for line in done.stderr.splitlines() if CONSOLE.search(line)]


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
