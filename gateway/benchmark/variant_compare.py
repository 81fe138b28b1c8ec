"""--variant: the default configuration and a variant alternated in one run, and their ratios."""

from __future__ import annotations

from pathlib import Path

from bench_keyspace import clean_slate
from gateway_commands import Gateway
from gateway_runs import DELIVERY, bench_file, steady_latency
from machine_state import machine_state


def compare(gateway: Gateway, variant: dict[str, str], repeat: int, frames_file: Path, latency_seconds: int,
            sources: int) -> None:
    """This VM drifts within minutes, so only neighbouring runs compare: file replay rate and steady latency of
    each, alternated `repeat` times."""
    label = " ".join(f"{k}={v}" for k, v in variant.items())
    print(f"comparing the defaults of the {gateway.name} gateway with {label}, {repeat} alternations; "
          f"machine state: {machine_state()}\n")
    ratios: list[tuple[float, float]] = []
    for i in range(repeat):
        figures = []
        for env in ({}, variant):
            clean_slate()
            rate = bench_file(gateway, frames_file, env).rate()
            clean_slate()
            _, ms = steady_latency(gateway, latency_seconds, sources, env)
            p50, p99 = ms(DELIVERY, 0.5), ms(DELIVERY, 0.99)
            figures.append((rate, p99))
            print(f"  {i + 1}. {'variant ' if env else 'defaults'}  file replay {rate:>9,.0f} rows/s   1,000 fr/s: "
                  f"p50 {p50:.1f} ms, p99 {p99:.1f} ms", flush=True)
        ratios.append((figures[1][0] / figures[0][0], figures[1][1] / figures[0][1]))
    rates, p99s = sorted(r for r, _ in ratios), sorted(p for _, p in ratios)
    print(f"\nvariant / defaults, median of {repeat}: rows/s {rates[len(rates) // 2]:.2f}, "
          f"p99 {p99s[len(p99s) // 2]:.2f}   (each: {', '.join(f'{r:.2f}/{p:.2f}' for r, p in ratios)})\n"
          f"machine state at the end: {machine_state()}")
