"""ReadingBatchEncoder sends exactly what the driver's public path (bind + BatchStatement.add) sends, and the rows
read back, against the real schema and the pinned driver."""

from datetime import date

import pytest
from cassandra import ConsistencyLevel
from cassandra.protocol import BatchMessage, ProtocolHandler
from cassandra.query import BatchStatement, BatchType

from conftest import migrate
from telemetry_gateway.reading_batches import EncodedRows, ReadingBatchEncoder, with_encoded_rows
from telemetry_gateway.spool import NewFrame, SpooledFrame

pytestmark = pytest.mark.cassandra


def wire_bytes(handler: type, batch: BatchStatement, protocol_version: int) -> bytes:
    # every part of the message after the rows too: serial consistency, timestamp, keyspace
    message = BatchMessage(batch.batch_type, batch._statements_and_parameters, ConsistencyLevel.LOCAL_QUORUM,
                           ConsistencyLevel.LOCAL_SERIAL, 1_774_742_400_000_123, batch.keyspace)
    message.tracing = False
    return bytes(handler.encode_message(message, 7, protocol_version, compressor=None,
                                        allow_beta_protocol_version=False))


def test_same_bytes_and_routing_as_the_public_path_and_rows_read_back(cql, fresh_keyspace):
    assert migrate("--keyspace", fresh_keyspace).returncode == 0
    cql.set_keyspace(fresh_keyspace)
    insert = cql.prepare("INSERT INTO readings (source, day, metric, ts, value) VALUES (?, ?, ?, ?, ?)")
    version = cql.cluster.protocol_version
    day = date(2026, 3, 29)
    values = [(("temp_in", 11.77), ("light", -0.0)), (("temp_in", 1e300), ("humidity", -3.25), ("light", 57.0)),
              (("temp_in", -40.0), ("light", 0.5))]
    frames = [SpooledFrame(i + 1, *NewFrame.of("G", 1_774_742_400_000 + i, 0, v)) for i, v in enumerate(values)]

    plain_handler = cql.client_protocol_handler
    fast = ReadingBatchEncoder(cql, insert).batch("G", day, frames)
    public = BatchStatement(batch_type=BatchType.UNLOGGED)
    for f in frames:
        for metric, value in f.values:
            public.add(insert, ("G", day, metric, f.ts_ms, value))

    handler = cql.client_protocol_handler
    assert handler is not plain_handler and issubclass(handler, plain_handler)
    assert len(fast) == len(public) == 7
    assert wire_bytes(handler, fast, version) == wire_bytes(plain_handler, public, version)
    assert wire_bytes(handler, public, version) == wire_bytes(plain_handler, public, version)  # others untouched
    assert fast.routing_key == public.routing_key  # token-aware routing picks the same replicas
    assert fast.keyspace == public.keyspace == fresh_keyspace
    assert fast.is_idempotent
    ReadingBatchEncoder(cql, insert)
    assert cql.client_protocol_handler is handler  # installed once per session

    cql.execute(fast)
    got = cql.execute("SELECT metric, ts, value FROM readings WHERE source = 'G' AND day = '2026-03-29'")
    assert sorted((r.metric, int(r.ts.timestamp() * 1000), r.value) for r in got) == \
        sorted((m, f.ts_ms, v) for f in frames for m, v in f.values)
    fast.clear()  # as the sender does once a batch is written
    assert len(fast) == 0
    cql.set_keyspace("system")


def test_encoded_rows_cannot_be_sent_by_a_plain_handler():
    rows = EncodedRows(1, b"\x01")
    message = BatchMessage(BatchType.UNLOGGED, rows, ConsistencyLevel.ONE)
    with pytest.raises(TypeError, match="with_encoded_rows"):
        ProtocolHandler.encode_message(message, 0, 5, compressor=None, allow_beta_protocol_version=False)
    assert with_encoded_rows(ProtocolHandler).encode_message(message, 0, 5, None, False)
