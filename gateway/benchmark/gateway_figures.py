"""The figures of several gateways measured in one run: each phase run for every gateway in turn, `repeat` times,
and what each gave (its medians are what the side-by-side table prints)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from bench_keyspace import clean_slate
from gateway_commands import Gateway

# The figures, by name: one value a run of the phase that measures them.
FILE_RATE = "file replay rows/s"
FILE_VS_CEILING = "file replay / the same round's ceiling"
GATEWAY_CPU = "gateway CPU µs per row"
CPU_VS_CEILING = "gateway CPU / the same round's ceiling's client CPU"
CASSANDRA_CPU = "Cassandra CPU µs per row"
PACED_KEPT_UP = "paced kept up (1 or 0)"
PACED_LAG = "paced lag s"
PACED_SPOOLED = "paced most frames spooled"
PTY_RATE = "pty unpaced rows/s"
DELIVERY_P50 = "delivery p50 ms"
DELIVERY_P99 = "delivery p99 ms"
REQUEST_P50 = "request p50 ms"
REQUEST_P99 = "request p99 ms"
DRAIN_RATE = "backlog drain rows/s"
FILL_RATE = "backlog fill rows/s"


class Measured(NamedTuple):
    """What one run of a phase gave: a line to print as it ends, its figures, and the process's peak RSS."""
    line: str
    values: dict[str, float]
    peak_rss_kb: int


@dataclass
class GatewayFigures:
    """Every figure one gateway gave in this run (a value a run) and its peak RSS over every phase."""
    values: dict[str, list[float]] = field(default_factory=dict)
    peak_rss_kb: int = 0
    failures: int = 0

    def add(self, measured: Measured) -> None:
        for name, value in measured.values.items():
            self.values.setdefault(name, []).append(value)
        self.peak_rss_kb = max(self.peak_rss_kb, measured.peak_rss_kb)

    def median(self, name: str) -> float | None:
        """The median of the figure's runs; None when no run gave it (each failed)."""
        values = self.values.get(name)
        return statistics.median(values) if values else None


def alternate(gateways: list[Gateway], repeat: int, phase: Callable[[Gateway], Measured],
              figures: dict[str, GatewayFigures], before_round: Callable[[], None] | None = None) -> None:
    """Runs phase for each gateway in turn (python, node, python, node, ...), `repeat` rounds, each on empty tables
    and an idle node: this VM drifts within minutes, so only neighbouring runs compare. A run that fails (the
    gateway exits non-zero, or never gets there) is printed and left out of the figures."""
    for _ in range(repeat):
        if before_round:
            before_round()
        for gateway in gateways:
            clean_slate()
            try:
                measured = phase(gateway)
            except (SystemExit, Exception) as error:  # one gateway failing leaves the others' figures
                figures[gateway.name].failures += 1
                print(f"  {gateway.name:<8} failed: {error!r}", flush=True)
                continue
            figures[gateway.name].add(measured)
            print(f"  {gateway.name:<8} {measured.line}", flush=True)
