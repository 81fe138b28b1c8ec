"""gateway/bench: throughput, latency, memory and backlog drain of several gateways (--gateways, default python and
node) on the same corpus and the same local Cassandra, alternated phase by phase, side by side with the ceiling of
pre-built batches measured in the same run, single-row async inserts from the Python driver and latte (native,
single-row).

Gateway names: python (.venv/bin/telemetry-gateway), node (gateway/node/bin/telemetry-gateway-node), and custom:
the command GATEWAY_COMMAND names, when it is set (then a third column by default; `--gateways python,custom`
compares it with python alone). Prints figures, ratios and the targets met or not; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
from functools import partial

from bench_keyspace import clean_slate, fresh_keyspace
from bench_settings import ROOT, ROWS_PER_FRAME, WORK
from board_input import frames_file
from driver_references import Ceiling, batched_reference, gateway_batching, single_row_reference
from gateway_commands import Gateway, chosen_gateways, default_gateway_names
from gateway_figures import GatewayFigures, alternate
from gateway_phases import backlog, file_replay, latency, paced, pty_unpaced
from gateway_runs import STEADY_AFTER_S
from latte_reference import LATTE_VERSION, latte_reference
from machine_state import machine_state
from side_by_side_table import print_table, table_rows, target_lines
from variant_compare import compare
from warm_up import warm_up, warm_up_line

PHASES = ("file", "paced", "pty", "latency", "backlog")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="gateway/bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gateways", default=default_gateway_names(),
                   help="comma-separated gateway names, in the order they alternate (default: %(default)s)")
    p.add_argument("--frames", type=int, default=250_000, help="frames for the file run (4 rows each)")
    p.add_argument("--paced-rate", type=int, default=100_000, help="rows/s offered in the paced run")
    p.add_argument("--paced-seconds", type=int, default=30, help="length of the paced run")
    p.add_argument("--pty-frames", type=int, default=100_000)
    p.add_argument("--sources", type=int, default=20)
    p.add_argument("--latency-seconds", type=int, default=20, help="length of the 1,000 frames/s run")
    p.add_argument("--reference-rows", type=int, default=200_000,
                   help="rows of the single-row reference; the ceiling sends twice as many")
    p.add_argument("--latte-seconds", type=int, default=30,
                   help="length of the latte reference; 0 leaves latte out (and does not build it)")
    p.add_argument("--warmup-frames", type=int, default=100_000,
                   help="frames replayed first and not measured (see warm_up), by the first gateway")
    p.add_argument("--variant", action="append", default=[], metavar="TELEMETRY_KEY=VALUE",
                   help="compare the first gateway's defaults with this setting instead (repeatable: one variant "
                        "of several keys)")
    p.add_argument("--repeat", type=int,
                   help="rounds of each phase, every gateway once a round (default 1; with --variant: 3)")
    p.add_argument("--phases", default=",".join(PHASES),
                   help="comma-separated phases to run (default: %(default)s); the ceiling and the references "
                        "are measured with the file phase only")
    return p.parse_args()


def median_ceiling(ceilings: list[Ceiling]) -> Ceiling:
    return Ceiling(*(statistics.median(figure) for figure in zip(*ceilings)))


def warm(gateway: Gateway, args: argparse.Namespace) -> None:
    if args.warmup_frames:
        print(warm_up_line(warm_up(gateway, args.warmup_frames, args.sources), args.warmup_frames * ROWS_PER_FRAME),
              flush=True)


def main() -> None:
    args = parse_args()
    gateways = chosen_gateways(args.gateways)
    phases = set(filter(None, (p.strip() for p in args.phases.split(","))))
    if not phases or not phases <= set(PHASES):
        raise SystemExit(f"bench: --phases takes some of {', '.join(PHASES)}")
    WORK.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(ROOT / "deploy" / "local" / "cassandra"), "start"], check=True, stdout=subprocess.DEVNULL)
    fresh_keyspace()
    frames = frames_file(args.frames, args.sources) if args.variant or phases & {"file", "backlog"} else None
    if args.variant:
        warm(gateways[0], args)
        variant = dict(item.split("=", 1) for item in args.variant)
        compare(gateways[0], variant, args.repeat or 3, frames, args.latency_seconds, args.sources)
        return
    repeat = args.repeat or 1
    print(f"gateway/bench: {args.sources} sources, 4 metrics a frame; local Cassandra, {os.cpu_count()} cores "
          f"shared with it; {repeat} round(s) of each phase, the gateways alternating in each:\n"
          + "".join(f"  {g.name:<8} {' '.join(g.command)}\n" for g in gateways)
          + f"machine state: {machine_state()}\n", flush=True)
    warm(gateways[0], args)
    print(f"(each phase starts on empty tables and an idle node: waited {clean_slate():.0f} s)", flush=True)
    figures = {g.name: GatewayFigures() for g in gateways}
    batch_rows, in_flight = gateway_batching()
    ceilings: list[Ceiling] = []

    def measure_ceiling() -> None:
        clean_slate()
        ceilings.append(batched_reference(args.reference_rows * 2, batch_rows, in_flight))
        print(f"  ceiling  {ceilings[-1].rate:>9,.0f} rows/s   CPU per row: client {ceilings[-1].client_cpu_us:.1f} "
              f"µs, Cassandra {ceilings[-1].cassandra_cpu_us:.1f} µs", flush=True)

    if "file" in phases:
        print(f"file replay, {args.frames * ROWS_PER_FRAME:,} rows (each round after the ceiling: the Python "
              f"driver, pre-built batches of {batch_rows} rows, {in_flight} in flight)", flush=True)
        alternate(gateways, repeat, lambda g: file_replay(g, frames, args.frames, ceilings[-1]), figures,
                  before_round=measure_ceiling)
    paced_label = f"{args.paced_rate:,} rows/s for {args.paced_seconds} s"
    if "paced" in phases:
        print(f"file, paced: {paced_label} through a FIFO", flush=True)
        alternate(gateways, repeat, partial(paced, rows_per_s=args.paced_rate, seconds=args.paced_seconds,
                                            sources=args.sources), figures)
    if "pty" in phases:
        print(f"pty, unpaced: {args.pty_frames * ROWS_PER_FRAME:,} rows", flush=True)
        alternate(gateways, repeat, partial(pty_unpaced, frames=args.pty_frames, sources=args.sources), figures)
    if "latency" in phases:
        print(f"pty, 1,000 frames/s for {args.latency_seconds} s (the first {STEADY_AFTER_S} s after the first "
              f"rows left out)", flush=True)
        alternate(gateways, repeat, partial(latency, seconds=args.latency_seconds, sources=args.sources), figures)
    if "backlog" in phases:
        print(f"spool backlog: {args.frames * ROWS_PER_FRAME:,} rows spooled with Cassandra away, then drained",
              flush=True)
        alternate(gateways, repeat, partial(backlog, path=frames, frames=args.frames), figures)

    single = latte = ceiling = None
    if "file" in phases:
        clean_slate()
        single = single_row_reference(args.reference_rows)
        print(f"reference: Python driver, single-row execute_async, 256 in flight: {single:,.0f} rows/s",
              flush=True)
        latte = latte_reference(args.latte_seconds) if args.latte_seconds > 0 else None
        if latte:
            print(f"reference: latte {LATTE_VERSION}, single-row prepared inserts, 256 in flight: {latte:,.0f} "
                  f"rows/s")
        ceiling = median_ceiling(ceilings)
        print(f"ceiling: Python driver, pre-built batches of {batch_rows} rows, {in_flight} in flight: "
              f"{ceiling.rate:,.0f} rows/s, client CPU {ceiling.client_cpu_us:.1f} µs and Cassandra CPU "
              f"{ceiling.cassandra_cpu_us:.1f} µs per row (median of {len(ceilings)})")
    print()
    print_table(gateways, figures, table_rows(paced_label, ceiling, single, latte))
    print("\ntargets:\n" + "\n".join(target_lines(gateways, figures)))
    print(f"machine state at the end: {machine_state()}")


if __name__ == "__main__":
    main()
