"""A gateway's phases: file replay, boards on a pty (unpaced, or 1,000 frames/s for latency), and a spool backlog
filled with Cassandra away and then drained (the paced FIFO: paced_run). Each returns what its figures are computed
from."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from telemetry_conformance import boards_on_pty

from bench_settings import WORK
from gateway_commands import Gateway
from gateway_process import ROWS_WRITTEN, GatewayRun
from prometheus_samples import quantile

DELIVERY = "telemetry_gateway_delivery_latency_seconds"
REQUEST = "telemetry_gateway_write_latency_seconds"
SPOOL_FRAMES = "telemetry_gateway_spool_frames"
STEADY_AFTER_S = 3  # the latency run's start-up, left out of its figures


def remove_spool(name: str) -> Path:
    """WORK/name, with the spool files an earlier run left there removed."""
    for p in WORK.glob(f"{name}*"):
        p.unlink()
    return WORK / name


def bench_file(gateway: Gateway, path: Path, env: dict | None = None) -> GatewayRun:
    """The frames of a file, read as fast as the gateway can, until every row is written."""
    spool = remove_spool("file.sqlite")
    run = GatewayRun(gateway, ["--input", str(path), "--exit-when-drained", "--spool", str(spool)], 9301, env)
    run.watch(lambda m: False)
    return run


def bench_pty(gateway: Gateway, frames: int, sources: int, rate: float, port: int, steady_after_s: float = 0.0,
              env: dict | None = None) -> tuple[GatewayRun, dict, dict]:
    """Returns the run, its last metrics, and its metrics steady_after_s seconds after the first rows were
    written (to leave the start-up, when frames wait for the connection to Cassandra, out of the latency)."""
    link = WORK / f"tty-{port}"
    spool = remove_spool(f"pty-{port}.sqlite")
    board = boards_on_pty(link, frames, sources, rate)
    run = GatewayRun(gateway, ["--port", str(link), "--spool", str(spool)], port, env)
    try:
        # Done when the board has finished and nothing is left to write (the first lines, written before the
        # gateway opened the port, are flushed by the open, as on a real serial line).
        first_rows = run.watch(lambda m: m.get(ROWS_WRITTEN, 0) > 0)
        steady_at = time.monotonic() + steady_after_s
        steady = run.watch(lambda m: time.monotonic() >= steady_at) if steady_after_s else first_rows
        last = run.watch(lambda m: board.poll() is not None and m.get(SPOOL_FRAMES, 1) == 0
                         and m.get("telemetry_gateway_requests_in_flight", 1) == 0
                         and m.get("telemetry_gateway_frames_written_total", 0) > 0)
    finally:  # a gateway that failed leaves the board blocked on a full pty
        run.stop()
        if board.poll() is None:
            board.kill()
        board.wait()
    return run, last, steady


def steady_latency(gateway: Gateway, seconds: int, sources: int,
                   env: dict | None = None) -> tuple[GatewayRun, Callable]:
    """A 1,000 frames/s run; returns it and ms(histogram, q): its quantiles with the start-up left out."""
    run, last, steady = bench_pty(gateway, 1000 * (seconds + STEADY_AFTER_S), sources, 1000, 9305,
                                  steady_after_s=STEADY_AFTER_S, env=env)
    return run, lambda name, q: quantile(last, name, q, since=steady) * 1000


def bench_backlog(gateway: Gateway, path: Path, frames: int) -> tuple[float, float, int]:
    """Returns the rows/s at which a spool of the file's frames drains, the frames/s at which it filled, and the
    peak RSS (kB) of the two processes."""
    spool = remove_spool("backlog.sqlite")
    # Fill the spool while Cassandra is unreachable (a closed port), as during an outage.
    fill = GatewayRun(gateway, ["--input", str(path), "--spool", str(spool)], 9303,
                      env={"TELEMETRY_CASSANDRA_PORT": "1"})
    started = time.monotonic()
    try:
        fill.watch(lambda m: m.get(SPOOL_FRAMES, 0) >= frames)
        fill_s = time.monotonic() - started
    finally:
        fill.stop()
    drain = GatewayRun(gateway, ["--input", "/dev/null", "--exit-when-drained", "--spool", str(spool)], 9304)
    drain.watch(lambda m: False)
    return drain.rate(), frames / fill_s, max(fill.peak_rss_kb, drain.peak_rss_kb)
