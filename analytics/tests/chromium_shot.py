"""Headless Debian Chromium: render a local page to PNG and read its pixels back (pypng)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import png


def screenshot(page: Path, out: Path, width: int = 1024, height: int = 2400) -> list[tuple[int, int, int]]:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                        f"--window-size={width},{height}", f"--screenshot={out}", page.resolve().as_uri()],
                       capture_output=True, text=True, timeout=120, check=True)
    w, h, rows, info = png.Reader(filename=str(out)).asRGB8()
    return [tuple(row[i:i + 3]) for row in rows for i in range(0, w * 3, 3)]


def hex_rgb(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5))
