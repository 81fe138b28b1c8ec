"""Headless Debian Chromium for the tests: a page (a file or a URL) rendered to PNG with its pixels read back
(pypng), and its DOM dumped with the console messages it logged. Used by the analytics report's tests and the
gateways' status page conformance test.

budget_ms: Chromium's virtual time budget, for a page whose script fetches and draws after load: the dump or the
screenshot waits until that much virtual time passed with the network idle (a live page's timers keep running)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import png

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
CONSOLE = re.compile(r":CONSOLE[:(]")  # Chromium's log line of a console message, e.g. [..:INFO:CONSOLE:1] "Error: …"


def _uri(page: Path | str) -> str:
    return page if isinstance(page, str) else page.resolve().as_uri()


def _run(page: Path | str, args: list[str], budget_ms: int | None) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(["chromium", *FLAGS, f"--user-data-dir={profile}", *args,
                               *([] if budget_ms is None else [f"--virtual-time-budget={budget_ms}"]), _uri(page)],
                              capture_output=True, text=True, timeout=120, check=True)


def _pixels(png_file: Path) -> list[tuple[int, int, int]]:
    w, h, rows, info = png.Reader(filename=str(png_file)).asRGB8()
    return [tuple(row[i:i + 3]) for row in rows for i in range(0, w * 3, 3)]


def _console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if CONSOLE.search(line)]


def screenshot(page: Path | str, out: Path, width: int = 1024, height: int = 2400,
               budget_ms: int | None = None) -> list[tuple[int, int, int]]:
    """The page (a file, or a URL string) as a PNG at out; its pixels, row by row."""
    _run(page, [f"--window-size={width},{height}", f"--screenshot={out}"], budget_ms)
    return _pixels(out)


def dom_and_console(page: Path | str, budget_ms: int | None = None) -> tuple[str, list[str]]:
    """The DOM after load (a file, or a URL string) and every console message it logged (errors such as an SVG
    attribute Chromium could not parse, an uncaught exception, a failed request)."""
    done = _run(page, ["--enable-logging=stderr", "--v=0", "--dump-dom"], budget_ms)
    return done.stdout, _console(done.stderr)


def dom_console_and_screenshot(page: Path | str, out: Path, width: int = 1024, height: int = 2400,
                               budget_ms: int | None = None) -> tuple[str, list[str], list[tuple[int, int, int]]]:
    """dom_and_console() and screenshot() of one page load, in one browser run."""
    done = _run(page, ["--enable-logging=stderr", "--v=0", f"--window-size={width},{height}", f"--screenshot={out}",
                       "--dump-dom"], budget_ms)
    return done.stdout, _console(done.stderr), _pixels(out)
