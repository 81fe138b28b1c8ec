"""Each phase run once for one gateway, as a Measured: the line printed as it ends and its figures."""

from __future__ import annotations

from pathlib import Path

from telemetry_conformance.process_usage import cassandra_pid, cpu_seconds

from bench_settings import ROWS_PER_FRAME
from driver_references import Ceiling
from gateway_commands import Gateway
from gateway_figures import CASSANDRA_CPU, CPU_VS_CEILING, DELIVERY_P50, DELIVERY_P99, DRAIN_RATE, FILE_RATE, \
    FILE_VS_CEILING, FILL_RATE, GATEWAY_CPU, PACED_KEPT_UP, PACED_LAG, PACED_SPOOLED, PTY_RATE, REQUEST_P50, \
    REQUEST_P99, Measured
from gateway_runs import DELIVERY, REQUEST, bench_backlog, bench_file, bench_pty, steady_latency
from paced_run import bench_paced


def file_replay(gateway: Gateway, path: Path, frames: int, ceiling: Ceiling) -> Measured:
    """The file of `frames` frames as fast as the gateway goes, against the ceiling measured just before."""
    rows = frames * ROWS_PER_FRAME
    cassandra_cpu = cpu_seconds(cassandra_pid())
    run = bench_file(gateway, path)
    cassandra_us = (cpu_seconds(cassandra_pid()) - cassandra_cpu) / rows * 1e6
    rate, gateway_us = run.rate(), run.cpu_s / rows * 1e6
    return Measured(f"{rate:>9,.0f} rows/s ({rate / ceiling.rate:.2f} × ceiling)   CPU per row: gateway "
                    f"{gateway_us:.1f} µs, Cassandra {cassandra_us:.1f} µs   peak RSS {run.peak_rss_kb / 1024:.0f} MB",
                    {FILE_RATE: rate, FILE_VS_CEILING: rate / ceiling.rate, GATEWAY_CPU: gateway_us,
                     CPU_VS_CEILING: gateway_us / ceiling.client_cpu_us, CASSANDRA_CPU: cassandra_us},
                    run.peak_rss_kb)


def paced(gateway: Gateway, rows_per_s: float, seconds: int, sources: int) -> Measured:
    result = bench_paced(gateway, rows_per_s, seconds, sources)
    written = f"written at {', '.join(f'{r:,.0f}' for r in result.per_10s)} rows/s (each 10 s), " \
        if result.per_10s else ""
    return Measured(f"{'kept up' if result.kept_up else 'did NOT keep up'}: {written}at most "
                    f"{result.most_spooled:,.0f} frames waiting in the spool, the last row written "
                    f"{result.lag_s:.2f} s after the input was due to end   "
                    f"peak RSS {result.run.peak_rss_kb / 1024:.0f} MB",
                    {PACED_KEPT_UP: float(result.kept_up), PACED_LAG: result.lag_s,
                     PACED_SPOOLED: result.most_spooled}, result.run.peak_rss_kb)


def pty_unpaced(gateway: Gateway, frames: int, sources: int) -> Measured:
    run, _, _ = bench_pty(gateway, frames, sources, 0, 9302)
    rate = run.rate()
    return Measured(f"{rate:>9,.0f} rows/s   peak RSS {run.peak_rss_kb / 1024:.0f} MB", {PTY_RATE: rate},
                    run.peak_rss_kb)


def latency(gateway: Gateway, seconds: int, sources: int) -> Measured:
    run, ms = steady_latency(gateway, seconds, sources)
    figures = {DELIVERY_P50: ms(DELIVERY, 0.5), DELIVERY_P99: ms(DELIVERY, 0.99),
               REQUEST_P50: ms(REQUEST, 0.5), REQUEST_P99: ms(REQUEST, 0.99)}
    return Measured(f"line read → rows acknowledged: p50 {figures[DELIVERY_P50]:.1f} ms, p99 "
                    f"{figures[DELIVERY_P99]:.1f} ms   (Cassandra request alone: p50 {figures[REQUEST_P50]:.1f} ms, "
                    f"p99 {figures[REQUEST_P99]:.1f} ms)   peak RSS {run.peak_rss_kb / 1024:.0f} MB",
                    figures, run.peak_rss_kb)


def backlog(gateway: Gateway, path: Path, frames: int) -> Measured:
    drain_rate, fill_rate, peak_rss_kb = bench_backlog(gateway, path, frames)
    fill_rows = fill_rate * ROWS_PER_FRAME
    return Measured(f"drained at {drain_rate:,.0f} rows/s (filled at {fill_rows:,.0f} rows/s with Cassandra away)"
                    f"   peak RSS {peak_rss_kb / 1024:.0f} MB",
                    {DRAIN_RATE: drain_rate, FILL_RATE: fill_rows}, peak_rss_kb)
