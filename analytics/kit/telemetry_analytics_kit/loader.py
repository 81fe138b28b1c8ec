"""Synthetic greenhouse history (the simulated boards' greenhouse model) written the way the gateway writes it, for
the analytics tests, the benchmark and the demo.

Per write: first the day_changes rows that --since-last relies on, one per (source, UTC day), acknowledged before any
readings are sent (gateway/contract/day-marks.md: mark, then readings); then the rows in UNLOGGED batches of one
partition (source, day), and once per (source, day) the source_days row. A load that outlasts a mark's freshness
(MARK_FRESH_S) marks its days again at the end.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Callable, Iterable

from telemetry_board_sim.greenhouse_model import DAY_MS, greenhouse_reading

UTC = timezone.utc
BATCH_ROWS = 100
MARK_FRESH_S = 300  # gateway/contract/day-marks.md
IN_FLIGHT = 64


@dataclass(frozen=True)
class Reading:
    source: str
    metric: str
    ts_ms: int
    value: float

    @property
    def utc_day(self) -> date:
        return datetime.fromtimestamp(self.ts_ms / 1000, tz=UTC).date()


def greenhouse_readings(source: str, start_ms: int, end_ms: int, step_ms: int, seed: int,
                        night_low: float | Callable[[int], float] = 1.0, with_vbat: bool = False) -> list[Reading]:
    """Frames every step_ms in [start_ms, end_ms) from the simulated boards' greenhouse model. night_low may vary by UTC
    day number (a function of ts // DAY_MS) so that some nights are cold and others not; with_vbat adds a fifth
    metric (battery volts, as sensor nodes send) so benchmark frames carry five values."""
    rng = random.Random(seed)
    low = night_low if callable(night_low) else (lambda _day: night_low)
    out = []
    for ts in range(start_ms, end_ms, step_ms):
        for metric, text in greenhouse_reading(ts, rng, night_low=low(ts // DAY_MS)):
            out.append(Reading(source, metric, ts, float(text)))
        if with_vbat:
            out.append(Reading(source, "vbat", ts, round(3.3 - (ts % 86_400_000) / 86_400_000 * 0.05, 3)))
    return out


def by_partition(readings: Iterable[Reading]) -> dict[tuple[str, date], list[Reading]]:
    parts: dict[tuple[str, date], list[Reading]] = defaultdict(list)
    for r in readings:
        parts[(r.source, r.utc_day)].append(r)
    return parts


class CassandraLoader:
    def __init__(self, session, keyspace: str):
        self.session = session
        self.insert = session.prepare(
            f"INSERT INTO {keyspace}.readings (source, day, metric, ts, value) VALUES (?, ?, ?, ?, ?)")
        self.source_day = session.prepare(f"INSERT INTO {keyspace}.source_days (day, source) VALUES (?, ?)")
        self.change = session.prepare(
            f"INSERT INTO {keyspace}.day_changes (bucket, day, source, written_at) VALUES (?, ?, ?, ?)")

    def write(self, readings: Iterable[Reading]) -> int:
        from cassandra.query import BatchStatement, BatchType

        parts = by_partition(readings)
        statements = []
        for (source, day), rows in parts.items():
            for i in range(0, len(rows), BATCH_ROWS):
                batch = BatchStatement(batch_type=BatchType.UNLOGGED)
                for r in rows[i:i + BATCH_ROWS]:
                    batch.add(self.insert, (source, day, r.metric, r.ts_ms, r.value))  # an int is epoch ms
                statements.append(batch)
        marked = time.monotonic()
        self._mark(parts)
        self._run(statements)
        self._run([self.source_day.bind((day, source)) for source, day in parts])
        if time.monotonic() - marked > MARK_FRESH_S:
            self._mark(parts)
        return sum(len(rows) for rows in parts.values())

    def _mark(self, parts) -> None:
        now = datetime.now(UTC)
        bucket = now.replace(minute=0, second=0, microsecond=0)
        self._run([self.change.bind((bucket, day, source, now)) for source, day in parts])

    def _run(self, statements: list) -> None:
        pending = []
        for st in statements:
            pending.append(self.session.execute_async(st))
            if len(pending) >= IN_FLIGHT:
                pending.pop(0).result()
        for f in pending:
            f.result()
