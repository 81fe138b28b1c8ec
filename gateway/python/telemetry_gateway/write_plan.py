"""Spooled frames → the Cassandra writes that store them, grouped for speed.

Rows of one partition (source, UTC day) travel in one UNLOGGED batch: a single-partition batch is applied as one
mutation on one replica set, which is what makes batching fast. Batches never split a frame, so a frame is
acknowledged exactly when the batch that holds it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from .timestamps import utc_day


@dataclass(frozen=True)
class SpooledFrame:
    id: int  # spool row id: acknowledging it removes the frame from the spool
    source: str
    ts_ms: int
    values: tuple[tuple[str, float], ...]
    received_ms: int = 0  # when the line was read, for the delivery-latency metric


@dataclass
class ReadingBatch:
    source: str
    day: date
    rows: list[tuple[str, int, float]] = field(default_factory=list)  # (metric, ts_ms, value)
    frame_ids: list[int] = field(default_factory=list)


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
    open_batches: dict[tuple[str, date], ReadingBatch] = {}
    batches: list[ReadingBatch] = []
    newest: dict[tuple[str, str], LatestRow] = {}
    for frame in frames:
        key = (frame.source, utc_day(frame.ts_ms))
        batch = open_batches.get(key)
        if batch is None or (batch.rows and len(batch.rows) + len(frame.values) > batch_rows):
            batch = ReadingBatch(*key)
            open_batches[key] = batch
            batches.append(batch)
        batch.frame_ids.append(frame.id)
        for metric, value in frame.values:
            batch.rows.append((metric, frame.ts_ms, value))
            current = newest.get((frame.source, metric))
            if current is None or frame.ts_ms >= current.ts_ms:
                newest[(frame.source, metric)] = LatestRow(frame.source, metric, frame.ts_ms, value)
    return WritePlan(batches, list(newest.values()), list(open_batches))
