"""Warming Cassandra up before anything is measured: replays until its JIT compilers are nearly idle."""

from __future__ import annotations

from telemetry_conformance.process_usage import cassandra_pid, cpu_seconds, jit_cpu_seconds

from bench_keyspace import clean_slate
from bench_settings import ROWS_PER_FRAME
from board_input import frames_file
from gateway_commands import Gateway
from gateway_runs import bench_file

WARMUP_ROUNDS_MAX = 12
JIT_SETTLED = 0.10  # share of Cassandra's CPU spent by its JIT compilers in a round, below which it counts as warm


def warm_up(gateway: Gateway, frames: int, sources: int) -> list[tuple[float, float, float]]:
    """Replays `frames` frames, unmeasured, until Cassandra's JIT compilers are nearly idle. After a restart
    they took 41-55% of its CPU over the first 2M rows here, then 16, 16 and 10% over the next three 400k-row
    rounds. Cassandra's CPU per row is no signal of that, as it also falls with the rate (paced batches: 16.5 µs a
    row at 40k rows/s, 7.0 at 160k). Returns each round's (rows/s, Cassandra CPU µs per row, JIT share of it)."""
    path = frames_file(frames, sources)
    rounds: list[tuple[float, float, float]] = []
    while len(rounds) < WARMUP_ROUNDS_MAX:
        clean_slate()
        pid = cassandra_pid()
        cpu, jit = cpu_seconds(pid), jit_cpu_seconds(pid)
        rate = bench_file(gateway, path).rate()
        cpu, jit = cpu_seconds(pid) - cpu, jit_cpu_seconds(pid) - jit
        rounds.append((rate, cpu / (frames * ROWS_PER_FRAME) * 1e6, jit / max(cpu, 1e-9)))
        if rounds[-1][2] < JIT_SETTLED:
            break
    return rounds


def warm_up_line(rounds: list[tuple[float, float, float]], rows: int) -> str:
    return (f"warm-up, {len(rounds)} × {rows:,} rows (not measured; until Cassandra's JIT compilers use < "
            f"{JIT_SETTLED:.0%} of its CPU): "
            + ", ".join(f"{rate:,.0f} rows/s at {cpu:.1f} µs ({jit:.0%} JIT)" for rate, cpu, jit in rounds))
