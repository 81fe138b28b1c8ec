"""The analytics end of `make demo`, quietly: each step's whole output (Ivy's dependency resolution, Spark's own
logging, the job's lines) goes to a log file; the terminal gets the jobs' own event lines, a progress bar of the
steps (a line per step when not a terminal) and, at the end, the rows per day, the report's path and an export
command to try. A failed step prints the end of the log and the log's path, and the demo exits non-zero."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SUBMIT = ROOT / "analytics" / "submit"
# The jobs' own lines (events, the report's summary, the report's paths); not Ivy's or Spark's.
SHOWN = re.compile(r"^(daily|report|analytics demo): |^HTML report: |^Markdown report: |^report \S|^  \S+: ")
BAR = 24


class Progress:
    """A bar of the steps redrawn on a terminal; plain lines otherwise."""

    def __init__(self, total: int, out=sys.stdout):
        self.total, self.out, self.tty = total, out, out.isatty()
        self.step, self.name, self.started = 0, "", time.monotonic()
        self.lock = threading.Lock()

    def _bar(self) -> str:
        elapsed = time.monotonic() - self.started
        filled = BAR * (self.step - 1) // self.total + min(BAR // self.total - 1, int(elapsed) // 4)
        return f"\r[{'#' * filled}{'.' * (BAR - filled)}] {self.step}/{self.total} {self.name} {elapsed:.0f} s\x1b[K"

    def begin(self, name: str) -> None:
        with self.lock:
            self.step, self.name, self.started = self.step + 1, name, time.monotonic()
            self.out.write(self._bar() if self.tty else f"[{self.step}/{self.total}] {name} …\n")
            self.out.flush()

    def line(self, text: str) -> None:
        with self.lock:
            self.out.write(f"\r\x1b[K{text}\n{self._bar()}" if self.tty else f"{text}\n")
            self.out.flush()

    def tick(self) -> None:
        if self.tty:
            with self.lock:
                self.out.write(self._bar())
                self.out.flush()

    def end(self, ok: bool) -> None:
        with self.lock:
            took = time.monotonic() - self.started
            mark = "done" if ok else "FAILED"
            clear = "\r\x1b[K" if self.tty else ""
            self.out.write(f"{clear}[{self.step}/{self.total}] {self.name}: {mark} in {took:.1f} s\n")
            self.out.flush()


def run_step(progress: Progress, name: str, argv: list[str], log: Path) -> None:
    progress.begin(name)
    with log.open("a", encoding="utf-8") as sink:
        sink.write(f"\n==== {name}: {' '.join(argv)}\n")
        sink.flush()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        ticker = threading.Event()
        threading.Thread(target=lambda: [progress.tick() for _ in iter(lambda: ticker.wait(0.5), True)],
                         daemon=True).start()
        for text in proc.stdout:
            sink.write(text)
            if SHOWN.search(text):
                progress.line(text.rstrip("\n"))
        code = proc.wait()
        ticker.set()
    progress.end(code == 0)
    if code != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-20:]
        print("\n".join(tail), file=sys.stderr)
        print(f"analytics demo: step '{name}' failed (exit {code}); its whole output is in {log}", file=sys.stderr)
        sys.exit(code)


def rows_per_day(report: dict) -> list[str]:
    """Readings per local day, every source together, from report.json."""
    per_day: dict[str, int] = {}
    for s in report["sources"]:
        for d in s["readings_per_day"]:
            per_day[d["day"]] = per_day.get(d["day"], 0) + d["readings"]
    return [f"  {day}  {n:>9,} readings" for day, n in sorted(per_day.items())]


def export_works() -> bool:
    """The export job's command line answers (it starts no JVM for --help)."""
    done = subprocess.run([str(SUBMIT), "export", "--help"], capture_output=True, text=True, timeout=60)
    return done.returncode == 0


def main() -> int:
    out = Path(os.environ.get("ANALYTICS_REPORT_DIR", ROOT / ".state" / "analytics-report"))
    log = Path(os.environ.get("ANALYTICS_LOG", ROOT / ".state" / "demo" / "spark.log"))
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    today = datetime.now(timezone.utc).date()
    first = today - timedelta(days=2)
    print(f"analytics demo: Spark's and Ivy's output goes to {log}")
    steps = [("simulated readings, if none were written today",
              [sys.executable, "-m", "telemetry_analytics_kit.demo_data"]),
             ("daily aggregates of the changed days (Spark)", [str(SUBMIT), "daily"]),
             (f"report of {first} … {today} (Spark)",
              [str(SUBMIT), "report", "--from", first.isoformat(), "--to", today.isoformat(), "--out", str(out)])]
    progress = Progress(len(steps))
    for name, argv in steps:
        run_step(progress, name, argv, log)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    lines = ["", f"Rows per day ({report['time_zone']}):", *rows_per_day(report),
             f"Report: {(out / 'report.html').resolve()}"]
    if export_works():
        lines.append(f"Try an export: analytics/submit export --from {first} --to {today} --format csv "
                     f"--out .state/demo/readings.csv")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
