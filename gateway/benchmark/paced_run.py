"""The paced phase: frames offered at a fixed rate through a FIFO (as boards send them, not as fast as a file can be
read), and whether the gateway keeps up with them."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bench_settings import ROWS_PER_FRAME, WORK
from board_input import frames_file
from gateway_commands import Gateway
from gateway_process import ROWS_WRITTEN, GatewayRun
from gateway_runs import SPOOL_FRAMES, remove_spool

# A gateway at the offered rate writes the last rows within its delivery latency (tens of ms) plus this bench's
# 0.25 s sampling of its metrics; 1 s later is 100,000 rows behind at 100,000 rows/s.
KEPT_UP_LAG_S = 1.0


@dataclass
class PacedResult:
    run: GatewayRun
    per_10s: list[float]  # rows/s written in each whole 10 s of the input
    most_spooled: float  # the most frames waiting in the spool
    lag_s: float  # from when the input was due to end (at the offered rate) to when its last row was written

    @property
    def kept_up(self) -> bool:
        return self.lag_s <= KEPT_UP_LAG_S


def open_fifo_writer(fifo: Path, run: GatewayRun, timeout_s: float = 60) -> int | None:
    """The FIFO's write end, once the gateway has opened it for reading (a plain open would wait forever if the
    gateway never did); None when the gateway ended first."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO while nobody reads it
        except OSError:
            if run.process.poll() is not None:
                return None
            if time.monotonic() > deadline:
                run.stop()
                return None
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)
        return fd


def offer_paced(fifo: Path, run: GatewayRun, lines: list[bytes], frames_per_s: float, offered: list[float]) -> None:
    """Writes lines into the FIFO at frames_per_s, appending to offered when it started and when it ended (nothing
    when the gateway never read, one time when it stopped reading)."""
    fd = open_fifo_writer(fifo, run)
    if fd is None:
        return
    with open(fd, "wb") as out:
        offered.append(time.monotonic())
        sent = 0
        try:
            while sent < len(lines):
                due = min(len(lines), int((time.monotonic() - offered[0]) * frames_per_s))
                out.write(b"".join(lines[sent:due]))
                out.flush()
                sent = due
                time.sleep(0.005)
        except BrokenPipeError:  # the gateway ended
            return
    offered.append(time.monotonic())


def bench_paced(gateway: Gateway, rows_per_s: float, seconds: int, sources: int) -> PacedResult:
    """rows_per_s offered for `seconds`. A gateway that cannot keep up ends with the shortfall of every second
    in its spool (or, slower still at reading, with the input offered late): either way its last rows are written
    late."""
    frames = int(rows_per_s / ROWS_PER_FRAME * seconds)
    lines = frames_file(frames, sources).read_bytes().splitlines(keepends=True)
    fifo = WORK / "paced.fifo"
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    spool = remove_spool("paced.sqlite")
    run = GatewayRun(gateway, ["--input", str(fifo), "--exit-when-drained", "--spool", str(spool)], 9306)
    offered: list[float] = []  # when the input started and ended
    offering = threading.Thread(target=offer_paced, args=(fifo, run, lines, rows_per_s / ROWS_PER_FRAME, offered))
    offering.start()
    samples: list[tuple[float, float, float]] = []  # (time, frames in the spool, rows written)
    try:
        run.watch(lambda m: samples.append((time.monotonic(), m.get(SPOOL_FRAMES, 0), m.get(ROWS_WRITTEN, 0)))
                  and False)
    finally:
        exited = time.monotonic()
        offering.join()
        fifo.unlink()
    if len(offered) < 2:
        raise SystemExit(f"bench: the paced gateway did not read all its input; see {run.log}")
    started, ended = offered
    per_10s, window = [], None  # rows/s over each whole 10 s of the input
    for t, _, rows in samples:
        if started <= t <= ended:
            if window is None:
                window = (t, rows)
            elif t - window[0] >= 10:
                per_10s.append((rows - window[1]) / (t - window[0]))
                window = (t, rows)
    # The first sample with every row written; the exit (an upper bound) if the count never got there.
    written_at = next((t for t, _, rows in samples if rows >= frames * ROWS_PER_FRAME), exited)
    return PacedResult(run, per_10s, max(depth for _, depth, _ in samples), written_at - (started + seconds))
