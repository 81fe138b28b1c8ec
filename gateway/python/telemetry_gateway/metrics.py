"""Prometheus metrics of one gateway (own registry, so tests can run several gateways in a process), declared from
the contract: gateway/contract/metrics.json (installed as telemetry_gateway/contract/metrics.json) gives every
family's name, type, help, labels and buckets; this file only gives each family its attribute."""

from __future__ import annotations

import json
import threading
from bisect import bisect_left
from importlib.resources import files
from typing import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics
from prometheus_client.metrics_core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

FAMILIES: dict[str, dict] = {family["name"]: family for family in json.loads(
    files(__package__).joinpath("contract", "metrics.json").read_text(encoding="utf-8"))["metrics"]}
PREFIX = "telemetry_gateway_"
# Dense around the 50 ms delivery target, so its p99 is read from the histogram without a wide bucket to guess in.
LATENCY_BUCKETS = tuple(FAMILIES[PREFIX + "delivery_latency_seconds"]["buckets"])
# The contract has no <name>_created families (another language's client does not make them); process-wide.
disable_created_metrics()


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.lines_read = declare("lines_read_total", r)
        self.status_lines = declare("status_lines_total", r)
        self.frames_accepted = declare("frames_accepted_total", r)
        self.rejects = declare("rejects_total", r)
        self.duplicates = declare("duplicates_total", r)
        self.seq_missing = declare("seq_missing_frames_total", r)
        self.board_restarts = declare("board_restarts_total", r)
        self.seq_conflicts = declare("seq_conflicts_total", r)
        self.sources_evicted = declare("sources_evicted_total", r)
        self.sources_tracked = declare("sources_tracked", r)
        self.time_refused = declare("explicit_time_refused_total", r)
        self.rows_written = declare("rows_written_total", r)
        self.frames_written = declare("frames_written_total", r)
        self.write_errors = declare("write_errors_total", r)
        self.requests_in_flight = declare("requests_in_flight", r)
        self.write_latency = declare("write_latency_seconds", r)
        family = FAMILIES[PREFIX + "delivery_latency_seconds"]
        self.delivery_latency = CountedHistogram(family["name"], family["help"], LATENCY_BUCKETS, registry=r)
        self.cassandra_up = declare("cassandra_up", r)
        self.input_up = declare("input_up", r)
        self.spool_frames = declare("spool_frames", r)
        self.spool_bytes = declare("spool_bytes", r)
        self.spool_full = declare("spool_full_total", r)
        self.reading_paused = declare("reading_paused", r)
        self.spool_dropped = declare("spool_dropped_frames_total", r)
        self.spool_damaged = declare("spool_damaged_total", r)
        self.spool_recovered_frames = declare("spool_recovered_frames_total", r)
        self.spool_invalid_frames = declare("spool_invalid_frames_total", r)
        self.spool_frames_committed = declare("spool_frames_committed_total", r)
        self.spool_holding = declare("spool_holding", r)
        self.frames_possibly_lost = declare("frames_possibly_lost_total", r)
        self.build_info = declare("build_info", r)
        self.last_seen = LastSeen(FAMILIES[PREFIX + "source_last_seen_seconds"], r)
        self.alerts_firing = declare("alerts_firing", r)
        self.alert_command_failures = declare("alert_command_failures_total", r)
        self.http_refused = declare("http_refused_total", r)


def declare(name: str, registry: CollectorRegistry) -> Counter | Gauge | Histogram:
    """The contract's family PREFIX + name, registered in registry."""
    family = FAMILIES[PREFIX + name]
    labels = list(family["labels"])
    if family["type"] == "counter":  # the client library adds _total itself
        return Counter(family["name"].removesuffix("_total"), family["help"], labels, registry=registry)
    if family["type"] == "gauge":
        return Gauge(family["name"], family["help"], labels, registry=registry)
    return Histogram(family["name"], family["help"], labels, buckets=family["buckets"], registry=registry)


class CountedHistogram(Collector):
    """A Prometheus histogram that takes many equal observations in one call.

    Every frame of a read shares its delivery latency, and at 25k frames/s the client library's Histogram (one
    observe() per frame, with a lock, no count argument) took 16% of the sender's CPU. Exposed exactly like a
    Histogram: _bucket{le}, _count, _sum.
    """

    def __init__(self, name: str, documentation: str, buckets: Iterable[float], registry: CollectorRegistry) -> None:
        self._name = name
        self._documentation = documentation
        self._bounds = [*sorted(buckets), float("inf")]
        self._counts = [0] * len(self._bounds)
        self._sum = 0.0
        self._lock = threading.Lock()
        registry.register(self)

    def observe(self, amount: float, count: int = 1) -> None:
        """count observations of amount."""
        i = bisect_left(self._bounds, amount)  # the first bucket with amount <= its bound
        with self._lock:
            self._counts[i] += count
            self._sum += amount * count

    def collect(self) -> Iterable[HistogramMetricFamily]:
        with self._lock:
            counts, total = list(self._counts), self._sum
        cumulative, buckets = 0, []
        for bound, count in zip(self._bounds, counts):
            cumulative += count
            buckets.append((floatToGoString(bound), cumulative))
        yield HistogramMetricFamily(self._name, self._documentation, buckets=buckets, sum_value=total)

    def describe(self) -> Iterable[HistogramMetricFamily]:
        yield HistogramMetricFamily(self._name, self._documentation)


class LastSeen(Collector):
    """source_last_seen_seconds, read at each scrape from read() ({source: Unix ms}; the status tally's), so
    accepting a frame costs no gauge update."""

    def __init__(self, family: dict, registry: CollectorRegistry) -> None:
        self._family = family
        self.read: Callable[[], dict[str, int]] = dict
        registry.register(self)

    def collect(self) -> Iterable[GaugeMetricFamily]:
        gauge = GaugeMetricFamily(self._family["name"], self._family["help"], labels=list(self._family["labels"]))
        for source, ms in sorted(self.read().items()):
            gauge.add_metric([source], ms / 1000)
        yield gauge

    def describe(self) -> Iterable[GaugeMetricFamily]:
        yield GaugeMetricFamily(self._family["name"], self._family["help"], labels=list(self._family["labels"]))
