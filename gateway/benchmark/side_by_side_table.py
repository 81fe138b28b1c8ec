"""The gateways' figures side by side (medians of their runs), the ratio of each to the first gateway's (python's
when it ran), and the throughput, latency and memory targets met or not by each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from driver_references import Ceiling
from gateway_commands import Gateway
from gateway_figures import CASSANDRA_CPU, CPU_VS_CEILING, DELIVERY_P50, DELIVERY_P99, DRAIN_RATE, FILE_RATE, \
    FILE_VS_CEILING, FILL_RATE, GATEWAY_CPU, PACED_KEPT_UP, PACED_LAG, PACED_SPOOLED, PTY_RATE, REQUEST_P50, \
    REQUEST_P99, GatewayFigures

TARGET_SHARE_OF_CEILING = 0.6  # file replay rows/s, of the pre-built batches' in the same round
TARGET_P99_MS = 25.0  # delivery latency at 1,000 frames/s
TARGET_RSS_MB = 120.0  # peak over every phase
BASELINE = "python"  # the gateway the others are compared with (rows/s >= its; the ratio columns)

Value = Callable[[GatewayFigures], float | None]


@dataclass(frozen=True)
class Row:
    label: str
    value: Value
    show: Callable[[float], str]
    compared: bool = True  # with a ratio to the baseline's


def median(name: str) -> Value:
    return lambda f: f.median(name)


def ratio(name: str, divisor: str | float | None) -> Value:
    """The figure's median over another figure's median (of the same gateway) or over a number."""
    def value(f: GatewayFigures) -> float | None:
        top, bottom = f.median(name), f.median(divisor) if isinstance(divisor, str) else divisor
        return top / bottom if top is not None and bottom else None
    return value


def kept_up(share: float) -> str:
    return "yes" if share == 1 else "no" if share == 0 else f"{share:.0%} of runs"


def peak_rss_mb(f: GatewayFigures) -> float | None:
    return f.peak_rss_kb / 1024 or None


def table_rows(paced: str, ceiling: Ceiling | None, single: float | None, latte: float | None) -> list[Row]:
    """The table's rows; ceiling and single are None when the file phase (which measures them) did not run."""
    count, one, two = "{:,.0f}".format, "{:.1f}".format, "{:.2f}".format
    latte_row = [Row("  / latte single-row inserts", ratio(FILE_RATE, latte), one)] if latte else []
    return [
        Row("file replay, rows/s", median(FILE_RATE), count),
        Row("  / ceiling (pre-built batches, same round)", median(FILE_VS_CEILING), two),
        Row("  / single-row Python inserts", ratio(FILE_RATE, single), one),
        *latte_row,
        Row("  gateway CPU, µs per row", median(GATEWAY_CPU), one),
        Row("  / ceiling's client CPU per row", median(CPU_VS_CEILING), two),
        Row("  Cassandra CPU, µs per row", median(CASSANDRA_CPU), one),
        Row(f"paced {paced}: kept up", median(PACED_KEPT_UP), kept_up, compared=False),
        Row("  last row written, s after the input's due end", median(PACED_LAG), two),
        Row("  most frames waiting in the spool", median(PACED_SPOOLED), count),
        Row("pty unpaced, rows/s", median(PTY_RATE), count),
        Row("  / file replay", ratio(PTY_RATE, FILE_RATE), two),
        Row("1,000 frames/s: delivery p50, ms", median(DELIVERY_P50), one),
        Row("  delivery p99, ms", median(DELIVERY_P99), one),
        Row("  Cassandra request alone p50, ms", median(REQUEST_P50), one),
        Row("  Cassandra request alone p99, ms", median(REQUEST_P99), one),
        Row("backlog drain, rows/s", median(DRAIN_RATE), count),
        Row("  / ceiling", ratio(DRAIN_RATE, ceiling.rate if ceiling else None), two),
        Row("  / file replay (target >= 0.80)", ratio(DRAIN_RATE, FILE_RATE), two),
        Row("  spool filled with Cassandra away, rows/s", median(FILL_RATE), count),
        Row("peak RSS over every phase, MB", peak_rss_mb, count),
    ]


def baseline_of(gateways: list[Gateway]) -> Gateway:
    return next((g for g in gateways if g.name == BASELINE), gateways[0])


def print_table(gateways: list[Gateway], figures: dict[str, GatewayFigures], rows: list[Row]) -> None:
    """A column per gateway, then one per other gateway with its ratio to the baseline ("node/python")."""
    base = baseline_of(gateways)
    others = [g for g in gateways if g is not base]
    width = max(len(row.label) for row in rows) + 2
    print(f"{'':<{width}}" + "".join(f"{g.name:>14}" for g in gateways)
          + "".join(f"{g.name + '/' + base.name:>16}" for g in others))
    for row in rows:
        values = {g.name: row.value(figures[g.name]) for g in gateways}
        cells = [row.show(values[g.name]) if values[g.name] is not None else "-" for g in gateways]
        ratios = [f"{values[g.name] / values[base.name]:.2f}" if row.compared and values[g.name] is not None
                  and values[base.name] else "" for g in others]
        print(f"{row.label:<{width}}" + "".join(f"{c:>14}" for c in cells) + "".join(f"{r:>16}" for r in ratios))
    failed = [f"{g.name} {figures[g.name].failures}" for g in gateways if figures[g.name].failures]
    print(f"(medians of each gateway's runs; '-': no run gave the figure; failed runs: {', '.join(failed)})"
          if failed else "(medians of each gateway's runs)")


def judged(label: str, value: float | None, shown: str, met: Callable[[float], bool]) -> str:
    return f"{label}: no figure" if value is None else f"{label}: {shown} {'met' if met(value) else 'NOT met'}"


def target_lines(gateways: list[Gateway], figures: dict[str, GatewayFigures]) -> list[str]:
    """Per gateway: rows/s >= the baseline's (for the others), >= 0.6 × the ceiling, p99 <= 25 ms, RSS <= 120 MB."""
    base = baseline_of(gateways)
    base_rate = figures[base.name].median(FILE_RATE)
    lines = []
    for g in gateways:
        f = figures[g.name]
        rate, share, p99, rss = f.median(FILE_RATE), f.median(FILE_VS_CEILING), f.median(DELIVERY_P99), \
            peak_rss_mb(f)
        checks = [judged(f"rows/s >= {base.name}'s", rate if base_rate else None,
                         f"{rate or 0:,.0f} vs {base_rate or 0:,.0f}", lambda r: r >= base_rate)] \
            if g is not base else []
        checks += [judged(f"file replay >= {TARGET_SHARE_OF_CEILING} × ceiling", share, f"{share or 0:.2f}",
                          lambda s: s >= TARGET_SHARE_OF_CEILING),
                   judged(f"p99 <= {TARGET_P99_MS:.0f} ms", p99, f"{p99 or 0:.1f} ms", lambda p: p <= TARGET_P99_MS),
                   judged(f"RSS <= {TARGET_RSS_MB:.0f} MB", rss, f"{rss or 0:.0f} MB", lambda m: m <= TARGET_RSS_MB)]
        lines.append(f"  {g.name:<8} " + "; ".join(checks))
    return lines
