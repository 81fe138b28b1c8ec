"""gateway/bench: throughput, latency, memory and backlog drain of a gateway (GATEWAY_COMMAND, default the Python
one) against the local Cassandra, side by side with single-row async inserts from the Python driver and with latte
(native, single-row), in one run.

Prints figures and ratios; asserts nothing (targets are judged by a person reading the figures).
"""

from __future__ import annotations

import argparse
import os
import subprocess

from bench_keyspace import clean_slate, fresh_keyspace
from bench_settings import ROOT, ROWS_PER_FRAME, WORK
from board_input import frames_file
from driver_references import batched_reference, gateway_batching, single_row_reference
from gateway_runs import DELIVERY, REQUEST, STEADY_AFTER_S, bench_backlog, bench_file, bench_paced, bench_pty, \
    steady_latency
from latte_reference import LATTE_VERSION, latte_reference
from machine_state import machine_state
from process_usage import cassandra_pid, cpu_seconds
from variant_compare import compare
from warm_up import warm_up, warm_up_line


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="gateway/bench", description=__doc__)
    p.add_argument("--frames", type=int, default=250_000, help="frames for the file run (4 rows each)")
    p.add_argument("--paced-rate", type=int, default=100_000, help="rows/s offered in the paced run")
    p.add_argument("--paced-seconds", type=int, default=30, help="length of the paced run")
    p.add_argument("--pty-frames", type=int, default=100_000)
    p.add_argument("--sources", type=int, default=20)
    p.add_argument("--latency-seconds", type=int, default=20, help="length of the 1,000 frames/s run")
    p.add_argument("--reference-rows", type=int, default=200_000)
    p.add_argument("--latte-seconds", type=int, default=30,
                   help="length of the latte reference; 0 leaves latte out (and does not build it)")
    p.add_argument("--warmup-frames", type=int, default=100_000,
                   help="frames replayed first and not measured (see warm_up)")
    p.add_argument("--variant", action="append", default=[], metavar="TELEMETRY_KEY=VALUE",
                   help="compare the defaults with this setting instead (repeatable: one variant of several keys)")
    p.add_argument("--repeat", type=int, default=3, help="alternations with --variant")
    return p.parse_args()


def main() -> None:
    args = parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(ROOT / "deploy" / "local" / "cassandra"), "start"], check=True, stdout=subprocess.DEVNULL)
    fresh_keyspace()
    frames = frames_file(args.frames, args.sources)
    if args.variant:
        variant = dict(item.split("=", 1) for item in args.variant)
        if args.warmup_frames:
            print(warm_up_line(warm_up(args.warmup_frames, args.sources), args.warmup_frames * ROWS_PER_FRAME),
                  flush=True)
        compare(variant, args.repeat, frames, args.latency_seconds, args.sources)
        return
    print(f"gateway/bench: {args.sources} sources, 4 metrics a frame; local Cassandra, {os.cpu_count()} cores "
          f"shared with it\nmachine state: {machine_state()}\n")

    if args.warmup_frames:
        print(warm_up_line(warm_up(args.warmup_frames, args.sources), args.warmup_frames * ROWS_PER_FRAME),
              flush=True)
    print(f"(each phase starts on empty tables and an idle node: waited {clean_slate():.0f} s)", flush=True)

    cassandra_cpu = cpu_seconds(cassandra_pid())
    file_run = bench_file(frames)
    cassandra_cpu = cpu_seconds(cassandra_pid()) - cassandra_cpu
    file_rate = file_run.rate()
    rows = args.frames * ROWS_PER_FRAME
    print(f"file replay      {rows:>9,} rows  {file_rate:>9,.0f} rows/s   peak RSS {file_run.peak_rss_kb / 1024:.0f} MB   "
          f"CPU per row: gateway {file_run.cpu_s / rows * 1e6:.1f} µs, Cassandra {cassandra_cpu / rows * 1e6:.1f} µs",
          flush=True)

    clean_slate()
    paced_run, paced_10s, paced_depth, drained_s = bench_paced(args.paced_rate, args.paced_seconds, args.sources)
    paced = f"{args.paced_rate:,.0f} rows/s offered for {args.paced_seconds} s"
    print(f"file, paced      {paced}: written at {', '.join(f'{r:,.0f}' for r in paced_10s)} rows/s (each 10 s), "
          f"at most {paced_depth:,.0f} frames waiting in the spool, all written and the gateway gone "
          f"{drained_s:.1f} s after the input ended   peak RSS {paced_run.peak_rss_kb / 1024:.0f} MB", flush=True)

    clean_slate()
    pty_run, _, _ = bench_pty(args.pty_frames, args.sources, 0, 9302)
    pty_rate = pty_run.rate()
    print(f"pty, unpaced     {args.pty_frames * ROWS_PER_FRAME:>9,} rows  {pty_rate:>9,.0f} rows/s   "
          f"peak RSS {pty_run.peak_rss_kb / 1024:.0f} MB", flush=True)

    clean_slate()
    lat_run, ms = steady_latency(args.latency_seconds, args.sources)
    p99 = ms(DELIVERY, 0.99)
    print(f"pty, 1,000 fr/s  line read → rows acknowledged: p50 {ms(DELIVERY, 0.5):.1f} ms, p99 {p99:.1f} ms   "
          f"peak RSS {lat_run.peak_rss_kb / 1024:.0f} MB   (Cassandra request alone: p50 {ms(REQUEST, 0.5):.1f} ms, "
          f"p99 {ms(REQUEST, 0.99):.1f} ms; the first {STEADY_AFTER_S} s after the first rows left out)", flush=True)

    clean_slate()
    drain_rate, fill_rate = bench_backlog(frames, args.frames)
    print(f"spool backlog    {args.frames * ROWS_PER_FRAME:>9,} rows  drained at {drain_rate:,.0f} rows/s "
          f"(filled at {fill_rate * ROWS_PER_FRAME:,.0f} rows/s with Cassandra away)", flush=True)

    batch_rows, in_flight = gateway_batching()
    clean_slate()
    ceiling, ceiling_cpu = batched_reference(args.reference_rows * 2, batch_rows, in_flight)
    print(f"reference: Python driver, pre-built batches of {batch_rows} rows, {in_flight} in flight: {ceiling:,.0f} "
          f"rows/s (Cassandra CPU {ceiling_cpu:.1f} µs per row)", flush=True)
    single = single_row_reference(args.reference_rows)
    print(f"reference: Python driver, single-row execute_async, 256 in flight: {single:,.0f} rows/s", flush=True)
    latte = latte_reference(args.latte_seconds) if args.latte_seconds > 0 else None
    if latte:
        print(f"reference: latte {LATTE_VERSION}, single-row prepared inserts, 256 in flight: {latte:,.0f} rows/s")

    print("\nratios")
    print(f"  gateway file replay / single-row Python inserts: {file_rate / single:.1f}x")
    if latte:
        print(f"  gateway file replay / latte single-row inserts:  {file_rate / latte:.1f}x")
    print(f"  gateway file replay / pre-built batches:          {file_rate / ceiling:.2f}")
    print(f"  gateway pty / file replay:                        {pty_rate / file_rate:.2f}")
    print(f"  backlog drain / live (file) rate:                 {drain_rate / file_rate:.2f}   (target >= 0.80)")
    print(f"machine state at the end: {machine_state()}")
    runs = (file_run, paced_run, pty_run, lat_run)
    print(f"targets: >= 100,000 rows/s: {file_rate:,.0f} (file replay); {paced}: all written {drained_s:.1f} s "
          f"after the input ended; p99 <= 50 ms at 1,000 frames/s: {p99:.1f} ms; "
          f"RSS <= 80 MB: {max(run.peak_rss_kb for run in runs) / 1024:.0f} MB")


if __name__ == "__main__":
    main()
