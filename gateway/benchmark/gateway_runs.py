"""The gateway's phases: file replay, boards on a pty (unpaced, or 1,000 frames/s for latency), a paced FIFO, and
a spool backlog filled with Cassandra away and then drained. Each returns what its figures are computed from."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Callable

from bench_settings import ROWS_PER_FRAME, WORK
from board_input import boards_on_pty, frames_file
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


def bench_file(path: Path, env: dict | None = None) -> GatewayRun:
    """The frames of a file, read as fast as the gateway can, until every row is written."""
    spool = remove_spool("file.sqlite")
    run = GatewayRun(["--input", str(path), "--exit-when-drained", "--spool", str(spool)], 9301, env)
    run.watch(lambda m: False)
    return run


def bench_pty(frames: int, sources: int, rate: float, port: int, steady_after_s: float = 0.0,
              env: dict | None = None) -> tuple[GatewayRun, dict, dict]:
    """Returns the run, its last metrics, and its metrics steady_after_s seconds after the first rows were
    written (to leave the start-up, when frames wait for the connection to Cassandra, out of the latency)."""
    link = WORK / f"tty-{port}"
    spool = remove_spool(f"pty-{port}.sqlite")
    board = boards_on_pty(link, frames, sources, rate)
    run = GatewayRun(["--port", str(link), "--spool", str(spool)], port, env)
    # Done when the board has finished and nothing is left to write (the first lines, written before the
    # gateway opened the port, are flushed by the open, as on a real serial line).
    first_rows = run.watch(lambda m: m.get(ROWS_WRITTEN, 0) > 0)
    steady_at = time.monotonic() + steady_after_s
    steady = run.watch(lambda m: time.monotonic() >= steady_at) if steady_after_s else first_rows
    last = run.watch(lambda m: board.poll() is not None and m.get(SPOOL_FRAMES, 1) == 0
                     and m.get("telemetry_gateway_requests_in_flight", 1) == 0
                     and m.get("telemetry_gateway_frames_written_total", 0) > 0)
    run.stop()
    board.wait()
    return run, last, steady


def steady_latency(seconds: int, sources: int, env: dict | None = None) -> tuple[GatewayRun, Callable]:
    """A 1,000 frames/s run; returns it and ms(histogram, q): its quantiles with the start-up left out."""
    run, last, steady = bench_pty(1000 * (seconds + STEADY_AFTER_S), sources, 1000, 9305,
                                  steady_after_s=STEADY_AFTER_S, env=env)
    return run, lambda name, q: quantile(last, name, q, since=steady) * 1000


def bench_backlog(path: Path, frames: int) -> tuple[float, float]:
    """Returns the rows/s at which a spool of the file's frames drains, and the frames/s at which it filled."""
    spool = remove_spool("backlog.sqlite")
    # Fill the spool while Cassandra is unreachable (a closed port), as during an outage.
    fill = GatewayRun(["--input", str(path), "--spool", str(spool)], 9303, env={"TELEMETRY_CASSANDRA_PORT": "1"})
    started = time.monotonic()
    fill.watch(lambda m: m.get(SPOOL_FRAMES, 0) >= frames)
    fill_s = time.monotonic() - started
    fill.stop()
    drain = GatewayRun(["--input", "/dev/null", "--exit-when-drained", "--spool", str(spool)], 9304)
    drain.watch(lambda m: False)
    return drain.rate(), frames / fill_s


def open_fifo_writer(fifo: Path, gateway_log: Path, timeout_s: float = 60) -> int:
    """The FIFO's write end, once the gateway has opened it for reading (a plain open would wait forever if the
    gateway never did)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO while nobody reads it
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"bench: the gateway never opened {fifo}; see {gateway_log}")
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)
        return fd


def bench_paced(rows_per_s: float, seconds: int, sources: int) -> tuple[GatewayRun, list[float], float, float]:
    """Frames offered at a fixed rate for `seconds` (through a FIFO, as boards send them, not as fast as a file
    can be read): whether the gateway keeps up. A gateway that cannot would end with the shortfall of every second
    in its spool. Returns the run, the rows/s written in each 10 s of the input, the most frames waiting in the
    spool, and how long after the input ended the gateway had written every row and exited (--exit-when-drained:
    an upper bound, with its 0.2 s drain check, its shutdown and this bench's sampling in it)."""
    frames = int(rows_per_s / ROWS_PER_FRAME * seconds)
    lines = frames_file(frames, sources).read_bytes().splitlines(keepends=True)
    fifo = WORK / "paced.fifo"
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    spool = remove_spool("paced.sqlite")
    run = GatewayRun(["--input", str(fifo), "--exit-when-drained", "--spool", str(spool)], 9306)
    offered: list[float] = []  # when the input started and ended

    def offer() -> None:
        with open(open_fifo_writer(fifo, run.log), "wb") as out:
            offered.append(time.monotonic())
            sent = 0
            while sent < frames:
                due = min(frames, int((time.monotonic() - offered[0]) * rows_per_s / ROWS_PER_FRAME))
                out.write(b"".join(lines[sent:due]))
                out.flush()
                sent = due
                time.sleep(0.005)
        offered.append(time.monotonic())

    offering = threading.Thread(target=offer)
    offering.start()
    samples: list[tuple[float, float, float]] = []  # (time, frames in the spool, rows written)
    run.watch(lambda m: samples.append((time.monotonic(), m.get(SPOOL_FRAMES, 0), m.get(ROWS_WRITTEN, 0)))
              and False)
    exited = time.monotonic()
    offering.join()
    fifo.unlink()
    if run.process.returncode != 0:
        raise SystemExit(f"bench: the paced gateway exited with {run.process.returncode}; see {run.log}")
    started, ended = offered
    per_10s, window = [], None  # rows/s over each whole 10 s of the input
    for t, _, rows in samples:
        if started <= t <= ended:
            if window is None:
                window = (t, rows)
            elif t - window[0] >= 10:
                per_10s.append((rows - window[1]) / (t - window[0]))
                window = (t, rows)
    return run, per_10s, max(depth for _, depth, _ in samples), exited - ended
