"""Readings → UNLOGGED batches whose rows are already in their wire form.

The public path (PreparedStatement.bind() per row, BatchStatement.add(), then the driver's BatchMessage writing
every row value by value) costs several times the CPU per row, a large share of the gateway's at high rates. The
rows of a readings batch share one partition and differ only in metric, ts and value, so each row's bytes are
joined from three pieces: a head made once per partition and metric (kind, query id, source, day, metric), the
frame's timestamp, and the value's 8 bytes exactly as the spool stores them.

The batch carries them as EncodedRows where BatchStatement keeps its list of rows. The session's protocol handler,
the driver's extension point for message encoding (Session.client_protocol_handler), writes them where
BatchMessage writes its rows, and the rest of the message (consistency, flags, timestamp, keyspace) is written by
the driver's own BatchMessage. Routing (token-aware), retries and the rest are the driver's, unchanged. A test
compares the bytes with the public path's, against the pinned driver.
"""

from __future__ import annotations

import io
import struct
from datetime import date

from cassandra.cluster import Session
from cassandra.protocol import BatchMessage
from cassandra.query import BatchStatement, BatchType, PreparedStatement

from .reading_values import DOUBLE_BYTES, metric_names
from .spool import SpooledFrame

# A row of a BATCH message (native protocol v3-v5, section 4.1.7): kind 1 (prepared), [short bytes] query id,
# [short] value count, then each value as [int] length + bytes.
_PREPARED = b"\x01"
_SHORT = struct.Struct(">H")
_INT = struct.Struct(">i")
# The row's ts and value are 8 bytes each: the ts's length, the ts (CQL timestamp: signed ms since the epoch), and
# the value's length, in one piece per frame.
_TS_BETWEEN_LENGTHS = struct.Struct(">iqi")
_CACHE_LIMIT = 10_000  # partitions, and layouts of a partition, remembered; cleared past it


class EncodedRows:
    """A batch's rows in wire form, where BatchStatement keeps its list of (prepared, query id, values)."""

    __slots__ = ("count", "data")

    def __init__(self, count: int, data: bytes) -> None:
        self.count = count
        self.data = data

    def __len__(self) -> int:
        return self.count

    def __iter__(self):
        # Only a session whose handler is with_encoded_rows() can send these: fail loudly anywhere else.
        raise TypeError("EncodedRows are sent only by a session using with_encoded_rows(); this one does not")

    def __delitem__(self, index: slice) -> None:  # BatchStatement.clear() empties its rows this way
        if index != slice(None):
            raise TypeError("EncodedRows can only be emptied whole")
        self.count, self.data = 0, b""


class _EncodedBatchMessage(BatchMessage):
    def __init__(self, message: BatchMessage) -> None:
        vars(self).update(vars(message))  # the same message (consistency, tracing, payload...), rows encoded

    def send_body(self, f, protocol_version: int) -> None:
        rows: EncodedRows = self.queries
        rest = io.BytesIO()  # the driver's own encoding of this batch without rows: type, count 0, then the rest
        BatchMessage(self.batch_type, (), self.consistency_level, self.serial_consistency_level, self.timestamp,
                     self.keyspace).send_body(rest, protocol_version)
        rest = rest.getvalue()
        f.write(rest[:1])
        f.write(_SHORT.pack(rows.count))
        f.write(rows.data)
        f.write(rest[1 + _SHORT.size:])


class _EncodedRowsHandler:
    """Marks a protocol handler made by with_encoded_rows()."""


def with_encoded_rows(handler: type) -> type:
    """The session's protocol handler, also able to send batches of EncodedRows."""

    class EncodedRowsProtocolHandler(handler, _EncodedRowsHandler):
        @classmethod
        def encode_message(cls, msg, *args, **kwargs):
            if isinstance(msg, BatchMessage) and isinstance(msg.queries, EncodedRows):
                msg = _EncodedBatchMessage(msg)
            return super().encode_message(msg, *args, **kwargs)

    return EncodedRowsProtocolHandler


class ReadingBatchEncoder:
    def __init__(self, session: Session, insert: PreparedStatement) -> None:
        """insert: statements.cql's `reading` statement, prepared by the
        session, which from now on can send the batches."""
        if not issubclass(session.client_protocol_handler, _EncodedRowsHandler):
            session.client_protocol_handler = with_encoded_rows(session.client_protocol_handler)
        self._insert = insert
        self._version = session.cluster.protocol_version
        self._keyspace = insert.column_metadata[0].keyspace_name  # as BoundStatement takes it
        types = [column.type for column in insert.column_metadata]
        self._serialize_source, self._serialize_day, self._serialize_metric = (t.serialize for t in types[:3])
        self._row_start = _PREPARED + _SHORT.pack(len(insert.query_id)) + insert.query_id + _SHORT.pack(len(types))
        self._partitions: dict[tuple[str, date], tuple[bytes, bytes, dict[str, list[tuple[int, bytes]]]]] = {}

    def batch(self, source: str, day: date, frames: list[SpooledFrame]) -> BatchStatement:
        partition, routing_key, layouts = self._partition(source, day)
        pack_ts = _TS_BETWEEN_LENGTHS.pack
        pieces = []
        append = pieces.append
        rows = 0
        for frame in frames:
            ts = pack_ts(DOUBLE_BYTES, frame.ts_ms, DOUBLE_BYTES)
            vals = frame.vals
            heads = layouts.get(frame.metrics) or self._row_heads(partition, layouts, frame.metrics)
            for offset, head in heads:
                append(head)
                append(ts)
                append(vals[offset:offset + DOUBLE_BYTES])
            rows += len(heads)
        batch = BatchStatement(batch_type=BatchType.UNLOGGED)
        batch._statements_and_parameters = EncodedRows(rows, b"".join(pieces))  # see the module's note
        batch.routing_key = routing_key
        batch.keyspace = self._keyspace
        batch.is_idempotent = True
        return batch

    def _partition(self, source: str, day: date) -> tuple[bytes, bytes, dict[str, list[tuple[int, bytes]]]]:
        """A row's bytes up to its metric (kind, query id, value count, source, day), the routing key, and the
        partition's row heads by frame layout."""
        cached = self._partitions.get((source, day))
        if cached is None:
            if len(self._partitions) >= _CACHE_LIMIT:
                self._partitions.clear()
            # the routing key of the driver's own binding: token-aware routing stays the driver's business
            routing_key = self._insert.bind((source, day, "", 0, 0.0)).routing_key
            cached = self._partitions[(source, day)] = (
                self._row_start + _value(self._serialize_source(source, self._version))
                + _value(self._serialize_day(day, self._version)), routing_key, {})
        return cached

    def _row_heads(self, partition: bytes, layouts: dict[str, list[tuple[int, bytes]]],
                   names: str) -> list[tuple[int, bytes]]:
        """Per metric of a frame layout: the offset of its value in the frame's vals, and its row's bytes up to
        the ts's length."""
        if len(layouts) >= _CACHE_LIMIT:
            layouts.clear()
        heads = layouts[names] = [(i * DOUBLE_BYTES, partition + _value(self._serialize_metric(name, self._version)))
                                  for i, name in enumerate(metric_names(names))]
        return heads


def _value(serialized: bytes) -> bytes:
    return _INT.pack(len(serialized)) + serialized
