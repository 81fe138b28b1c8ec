"""analytics/bench-export: the export job's cost per day, for 1 day and for D days of history, as CSV and as Parquet,
on keyspace bench_export_<D>d (N sources, a frame a minute by default, loaded once by analytics/bench's loader and
kept for re-runs). Prints figures; asserts nothing. Cost per day = the run's time / days exported: wall (incl.
spark-submit, JVM and connector start-up) and
work (after start-up: selection, read, sort, write)."""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

from .benchmark import ensure_loaded, parse, session, submit


def export_run(args, keyspace: str, days: int, fmt: str, out: Path) -> dict:
    first = args.day - timedelta(days=days - 1)
    wall, text = submit(args, "export", "--keyspace", keyspace, "--tz", "UTC", "--from", first.isoformat(),
                        "--to", args.day.isoformat(), "--format", fmt, "--out", str(out))
    done = re.search(r"done: (\d+) readings to .* work ([\d.]+) s", text)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) if out.is_dir() else out.stat().st_size
    return {"days": days, "format": fmt, "wall": wall, "work": float(done.group(2)), "readings": int(done.group(1)),
            "bytes": size}


def main(argv=None) -> int:
    args = parse(argv if argv is not None else sys.argv[1:], "analytics/bench-export", __doc__, step=60)
    cluster = session(args.hosts)
    keyspace = f"bench_export_{args.days}d"
    ensure_loaded(cluster.connect(), args.hosts, keyspace, args, args.days)
    cluster.shutdown()

    folder = Path(tempfile.mkdtemp(prefix="bench-export-"))
    results = []
    try:
        for fmt in ("csv", "parquet"):
            for days in (1, args.days):
                out = folder / f"{days}d.{fmt}"
                r = export_run(args, keyspace, days, fmt, out)
                shutil.rmtree(out, ignore_errors=True) if out.is_dir() else out.unlink()
                print(f"bench-export: {fmt} {days} day(s): wall {r['wall']:.1f} s, work {r['work']:.1f} s, "
                      f"{r['readings']:,} readings, {r['bytes'] / 1e6:,.1f} MB", flush=True)
                results.append(r)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    print("\n== export benchmark ==")
    print(f"data: {args.sources} sources, a frame every {args.step:g} s, 5 metrics, {args.days} days stored; "
          f"master {args.master}")
    for fmt in ("csv", "parquet"):
        one, many = [r for r in results if r["format"] == fmt]
        per = {r["days"]: (r["wall"] / r["days"], r["work"] / r["days"]) for r in (one, many)}
        print(f"{fmt}: per day, 1 day: wall {per[1][0]:.1f} s, work {per[1][1]:.1f} s; {args.days} days: wall "
              f"{per[args.days][0]:.1f} s, work {per[args.days][1]:.1f} s; ratio {args.days} days / 1 day per day: "
              f"wall {per[args.days][0] / per[1][0]:.2f}, work {per[args.days][1] / per[1][1]:.2f}; "
              f"{many['readings'] / many['work']:,.0f} readings/s, "
              f"{many['bytes'] / many['readings']:.1f} bytes/reading")
    return 0
