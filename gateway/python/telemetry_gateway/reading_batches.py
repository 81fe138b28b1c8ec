"""Readings → UNLOGGED batches, encoded at a few hundred nanoseconds a row.

The public path (PreparedStatement.bind() per row, then BatchStatement.add()) validates and converts every value
and builds two objects per row: ~6 µs a row here, which alone would hold a gateway near 150k rows/s of a whole core.
A readings batch is one partition: the source and day are serialized once per partition, the metric names once per
frame layout, the timestamp once per frame, and the values are already CQL doubles in the spool. Each row is the
same (prepared, query id, values) entry that BatchStatement.add() appends, so the driver sends the same bytes and
routes the batch the same way (token-aware); a test compares them byte for byte with the public path, against the
pinned driver.
"""

from __future__ import annotations

import struct
from datetime import date

from cassandra.query import BatchStatement, BatchType, PreparedStatement

from .reading_values import DOUBLE_BYTES, metric_names
from .spool import SpooledFrame

_CQL_TIMESTAMP = struct.Struct(">q")  # CQL timestamp: signed milliseconds since the epoch
_CACHE_LIMIT = 10_000  # partitions and layouts remembered; cleared past it (months of sources × days)


class ReadingBatchEncoder:
    def __init__(self, insert: PreparedStatement, protocol_version: int) -> None:
        """insert: INSERT INTO readings (source, day, metric, ts, value) VALUES (?, ?, ?, ?, ?)"""
        self._insert = insert
        self._query_id = insert.query_id
        self._version = protocol_version
        self._keyspace = insert.column_metadata[0].keyspace_name  # as BoundStatement takes it
        types = [column.type for column in insert.column_metadata]
        self._serialize_source, self._serialize_day, self._serialize_metric = (t.serialize for t in types[:3])
        self._partitions: dict[tuple[str, date], tuple[bytes, bytes, bytes]] = {}
        self._layouts: dict[str, list[tuple[int, bytes]]] = {}

    def batch(self, source: str, day: date, frames: list[SpooledFrame]) -> BatchStatement:
        source_bytes, day_bytes, routing_key = self._partition(source, day)
        query_id = self._query_id
        entries = []
        append = entries.append
        for frame in frames:
            ts = _CQL_TIMESTAMP.pack(frame.ts_ms)
            vals = frame.vals
            for offset, metric in self._layout(frame.metrics):
                append((True, query_id, (source_bytes, day_bytes, metric, ts, vals[offset:offset + DOUBLE_BYTES])))
        batch = BatchStatement(batch_type=BatchType.UNLOGGED)
        batch._statements_and_parameters = entries  # what add() fills; see the module's note
        batch.routing_key = routing_key
        batch.keyspace = self._keyspace
        batch.is_idempotent = True
        return batch

    def _partition(self, source: str, day: date) -> tuple[bytes, bytes, bytes]:
        cached = self._partitions.get((source, day))
        if cached is None:
            if len(self._partitions) >= _CACHE_LIMIT:
                self._partitions.clear()
            # the routing key of the driver's own binding: token-aware routing stays the driver's business
            routing_key = self._insert.bind((source, day, "", 0, 0.0)).routing_key
            cached = self._partitions[(source, day)] = (self._serialize_source(source, self._version),
                                                        self._serialize_day(day, self._version), routing_key)
        return cached

    def _layout(self, names: str) -> list[tuple[int, bytes]]:
        cached = self._layouts.get(names)
        if cached is None:
            if len(self._layouts) >= _CACHE_LIMIT:
                self._layouts.clear()
            cached = self._layouts[names] = [(i * DOUBLE_BYTES, self._serialize_metric(name, self._version))
                                             for i, name in enumerate(metric_names(names))]
        return cached
