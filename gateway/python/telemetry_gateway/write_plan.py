"""Spooled frames → the Cassandra writes that store them, grouped for speed.

Rows of one partition (source, UTC day) travel in one UNLOGGED batch: a single-partition batch is applied as one
mutation on one replica set, which is what makes batching fast. Batches never split a frame, so a frame is
acknowledged exactly when the batch that holds it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from .reading_values import DOUBLE_BYTES
from .spool import SpooledFrame
from .timestamps import DAY_MS, utc_day


@dataclass
class ReadingBatch:
    source: str
    day: date
    frames: list[SpooledFrame] = field(default_factory=list)
    rows: int = 0  # readings in the batch: the frames' values


@dataclass(frozen=True)
class LatestRow:
    source: str
    metric: str
    ts_ms: int
    value: float


@dataclass
class WritePlan:
    batches: list[ReadingBatch]
    latest: list[LatestRow]  # newest value per (source, metric) among the frames
    days: list[tuple[str, date]]  # every (source, day) the frames touch


def plan_writes(frames: list[SpooledFrame], batch_rows: int) -> WritePlan:
    open_batches: dict[tuple[str, int], ReadingBatch] = {}
    batches: list[ReadingBatch] = []
    newest: dict[tuple[str, str], SpooledFrame] = {}  # per (source, metric names): frames share a few layouts
    for frame in frames:
        key = (frame.source, frame.ts_ms // DAY_MS)
        rows = len(frame.vals) // DOUBLE_BYTES
        batch = open_batches.get(key)
        if batch is None or (batch.rows and batch.rows + rows > batch_rows):
            batch = open_batches[key] = ReadingBatch(frame.source, utc_day(frame.ts_ms))
            batches.append(batch)
        batch.frames.append(frame)
        batch.rows += rows
        layout = (frame.source, frame.metrics)
        current = newest.get(layout)
        if current is None or frame.ts_ms >= current.ts_ms:
            newest[layout] = frame
    latest: dict[tuple[str, str], LatestRow] = {}
    for frame in sorted(newest.values(), key=lambda f: f.id):  # on equal times the later frame wins
        for metric, value in frame.values:
            current = latest.get((frame.source, metric))
            if current is None or frame.ts_ms >= current.ts_ms:
                latest[(frame.source, metric)] = LatestRow(frame.source, metric, frame.ts_ms, value)
    days = list(dict.fromkeys((b.source, b.day) for b in batches))
    return WritePlan(batches, list(latest.values()), days)
