"""The status page's sparklines (gateway/contract/status.md, "Sparklines"): per source and metric, the least,
greatest and last value of each 5-minute bucket of receipt times over the last 12 hours. Bounded: a few series a
source and a fixed number in all, so neither many boards nor ever new metric names grow memory. A pure function of
the frames fed to it and the clock readings passed in; kept in memory only (a restart starts empty)."""

from __future__ import annotations

import math
from collections import deque

from .contract_constants import contract_number

BUCKET_MS = contract_number("status_bucket_ms")
BUCKETS = contract_number("status_buckets")
PER_SOURCE_MAX = contract_number("status_series_per_source_max")
SERIES_MAX = contract_number("status_series_max")


class _Series:
    __slots__ = ("newest_ms", "points")

    def __init__(self) -> None:
        self.newest_ms = -math.inf  # the newest reading's receipt: an earlier one (clock stepped back) is left out
        self.points: deque[list] = deque()  # [bucket, min, max, last], oldest first


class SeriesTally:
    def __init__(self, per_source_max: int = PER_SOURCE_MAX, series_max: int = SERIES_MAX,
                 bucket_ms: int = BUCKET_MS, buckets: int = BUCKETS) -> None:
        self._per_source_max, self._series_max = per_source_max, series_max
        self._bucket_ms, self._buckets = bucket_ms, buckets
        self._sources: dict[str, dict[str, _Series]] = {}
        self._count = 0

    def frame(self, source: str, received_ms: int, values) -> None:
        """An accepted frame's readings ((metric, number) pairs), read at received_ms."""
        bucket = received_ms // self._bucket_ms
        metrics = self._sources.get(source)
        for metric, value in values:
            if not math.isfinite(value):
                continue
            series = None if metrics is None else metrics.get(metric)
            if series is None:
                if self._count >= self._series_max or (metrics is not None and len(metrics) >= self._per_source_max):
                    continue
                if metrics is None:
                    metrics = self._sources[source] = {}
                series = metrics[metric] = _Series()
                self._count += 1
            if received_ms < series.newest_ms:
                continue
            series.newest_ms = received_ms
            points = series.points
            if points and points[-1][0] == bucket:
                point = points[-1]
                point[1], point[2], point[3] = min(point[1], value), max(point[2], value), value
            else:
                points.append([bucket, value, value, value])
                while points[0][0] <= bucket - self._buckets:
                    points.popleft()

    def forget(self, source: str) -> None:
        """A source the gateway no longer tracks: its series are freed."""
        self._count -= len(self._sources.pop(source, {}))

    def view(self, now_ms: int) -> dict[str, list[tuple[str, list[tuple[int, float, float, float]]]]]:
        """Per source with a point in the window: (metric, [(bucket start ms, min, max, last)]), sorted by metric."""
        first = now_ms // self._bucket_ms - self._buckets  # buckets after this one are in the window
        shown = {}
        for source, metrics in self._sources.items():
            entries = []
            for metric in sorted(metrics):
                points = [(bucket * self._bucket_ms, low, high, last)
                          for bucket, low, high, last in metrics[metric].points if bucket > first]
                if points:
                    entries.append((metric, points))
            if entries:
                shown[source] = entries
        return shown
