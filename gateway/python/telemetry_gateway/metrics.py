"""Prometheus metrics of one gateway (own registry, so tests can run several gateways in a process)."""

from __future__ import annotations

import threading
from bisect import bisect_left
from typing import Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.metrics_core import HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

# Dense around the 50 ms delivery target, so its p99 is read from the histogram without a wide bucket to guess in.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
                   300)


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        p = "telemetry_gateway_"
        self.lines_read = Counter(p + "lines_read", "Lines read from inputs", ["input"], registry=r)
        self.status_lines = Counter(p + "status_lines", "Base-station status lines ('#')", ["input"], registry=r)
        self.frames_accepted = Counter(p + "frames_accepted", "Frames accepted", ["format"], registry=r)
        self.rejects = Counter(p + "rejects", "Rejected lines by reason", ["reason"], registry=r)
        self.duplicates = Counter(p + "duplicates", "Frames dropped as retransmissions", ["source"], registry=r)
        self.seq_missing = Counter(p + "seq_missing_frames", "Frames lost, from seq gaps", ["source"], registry=r)
        self.board_restarts = Counter(p + "board_restarts", "Seq went back to 0", ["source"], registry=r)
        self.seq_conflicts = Counter(p + "seq_conflicts", "Frames repeating a recent seq with other content; "
                                     "kept", ["source"], registry=r)
        self.sources_evicted = Counter(p + "sources_evicted", "Sources forgotten, least recently seen first, to "
                                       "keep [decode] max_sources", registry=r)
        self.sources_tracked = Gauge(p + "sources_tracked", "Sources whose state is kept", registry=r)
        self.time_refused = Counter(p + "explicit_time_refused", "Frames whose t was implausible; stamped on "
                                    "receipt instead", ["source"], registry=r)
        self.rows_written = Counter(p + "rows_written", "Readings rows acknowledged by Cassandra", registry=r)
        self.frames_written = Counter(p + "frames_written", "Frames acknowledged by Cassandra", registry=r)
        self.write_errors = Counter(p + "write_errors", "Failed Cassandra requests (retried)", ["error"], registry=r)
        self.requests_in_flight = Gauge(p + "requests_in_flight", "Cassandra requests sent and not yet answered "
                                        "(at most [cassandra] max_in_flight)",
                                        registry=r)
        self.write_latency = Histogram(p + "write_latency_seconds", "Cassandra request latency",
                                       buckets=LATENCY_BUCKETS, registry=r)
        self.delivery_latency = CountedHistogram(p + "delivery_latency_seconds", "Line read to its readings rows "
                                                 "acknowledged by Cassandra", LATENCY_BUCKETS, registry=r)
        self.cassandra_up = Gauge(p + "cassandra_up", "1 while Cassandra answers writes", registry=r)
        self.input_up = Gauge(p + "input_up", "1 while the input is open", ["input"], registry=r)
        self.spool_frames = Gauge(p + "spool_frames", "Frames in the spool, not yet acknowledged", registry=r)
        self.spool_bytes = Gauge(p + "spool_bytes", "Bytes used by spooled frames", registry=r)
        self.spool_full = Counter(p + "spool_full", "Times reading paused (or, with drop_oldest, frames were "
                                  "dropped) because the spool reached its cap or its disk filled", ["kind"],
                                  registry=r)
        self.reading_paused = Gauge(p + "reading_paused", "1 while reading is paused: the spool is at its cap "
                                    "(when_full = pause) or its disk is full", registry=r)
        self.spool_dropped = Counter(p + "spool_dropped_frames", "Oldest frames dropped (when_full = drop_oldest)",
                                     registry=r)


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
