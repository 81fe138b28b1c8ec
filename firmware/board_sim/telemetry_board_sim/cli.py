"""telemetry-board-sim: virtual boards on a pseudo-terminal, a file or stdout."""

from __future__ import annotations

import argparse

from .board_output import run_simulation
from .simulation import FORMATS, WEATHERS, SimulationSpec


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="telemetry-board-sim", description="Virtual greenhouse boards (v1 frames) or "
                                "the room board (CSV lines) on a pseudo-terminal, a file or stdout.")
    target = p.add_mutually_exclusive_group()
    target.add_argument("--pty", metavar="PATH", help="create a pty and link it at PATH")
    target.add_argument("--output", metavar="FILE", help="write lines to FILE ('-' = stdout, the default)")
    p.add_argument("--format", choices=FORMATS, default="v1", help="v1: greenhouse frames (default); csv: the room "
                   "board's `light,temperature` lines (one board: no --sources, no --days)")
    p.add_argument("--sources", type=int, default=1)
    p.add_argument("--rate", type=float, default=1.0, help="lines/s over all sources; 0 = unpaced")
    p.add_argument("--count", type=int, default=0, help="stop after this many lines (0 = run until stopped)")
    p.add_argument("--days", type=float, default=0.0, help="backfill: frames with explicit t over the last "
                   "DAYS, one per --interval seconds per source")
    p.add_argument("--interval", type=float, default=60.0)
    p.add_argument("--corrupt-every", type=int, default=0, metavar="N", help="damage every Nth line")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--weather", choices=WEATHERS, default="mild", help="mild: the same day every day (default); "
                   "demo: the last three UTC days hold a frost night, a hot afternoon and a mild day, and frames "
                   "carry the battery's voltage (vbat)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    try:
        spec = SimulationSpec(sources=args.sources, rate=args.rate, count=args.count, backfill_days=args.days,
                              interval_s=args.interval, corrupt_every=args.corrupt_every, seed=args.seed,
                              format=args.format, weather=args.weather)
    except ValueError as error:
        p.error(str(error))
    return run_simulation(spec, args.output, args.pty)
