"""`latest` is a view of the newest value per (source, metric), not a record: rows are coalesced in memory and
written now and then, each with its reading's time as write timestamp, so the view never moves back."""

from __future__ import annotations

from cassandra.query import BatchStatement, BatchType, PreparedStatement, Statement

from .write_plan import LatestRow


class LatestRows:
    def __init__(self) -> None:
        self._rows: dict[tuple[str, str], LatestRow] = {}

    def __bool__(self) -> bool:
        return bool(self._rows)

    def merge(self, rows: list[LatestRow]) -> None:
        for row in rows:
            current = self._rows.get((row.source, row.metric))
            if current is None or row.ts_ms >= current.ts_ms:
                self._rows[(row.source, row.metric)] = row

    def take(self) -> list[LatestRow]:
        """The coalesced rows, forgotten here."""
        rows, self._rows = list(self._rows.values()), {}
        return rows


def latest_batches(rows: list[LatestRow], statement: PreparedStatement) -> list[Statement]:
    """One UNLOGGED batch per source (one partition each)."""
    by_source: dict[str, BatchStatement] = {}
    for row in rows:
        batch = by_source.get(row.source)
        if batch is None:
            batch = by_source[row.source] = BatchStatement(batch_type=BatchType.UNLOGGED)
            batch.is_idempotent = True
        batch.add(statement, (row.source, row.metric, row.ts_ms, row.value, row.ts_ms * 1000))
    return list(by_source.values())
