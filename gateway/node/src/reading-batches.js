// The statements the gateway writes with (gateway/contract/statements.cql, read from it), and their parameters, as
// cassandra-driver takes them.
//
// A statement is {query, params} for one row or {queries: [{query, params}, ...], logged: false} for an UNLOGGED
// batch: every batch here holds rows of one partition, which Cassandra applies as one mutation on one replica set.
// Send them prepared (client.execute / client.batch with prepare: true, isIdempotent: true: the same reading has
// the same key, so a write may be repeated); the driver then routes a batch by its first row's partition key.
//
// Parameter values are chosen so that the driver writes each column's CQL type exactly, prepared or not:
// - readings rows: every value in wire form already (readingsBatch), the double as the spool stores it;
// - timestamps (CQL timestamp): a Date (ms since the epoch, UTC);
// - days (CQL date): the driver's LocalDate, made from the UTC day (timestamps.js utcDay); never a Date, whose day
//   the driver takes in local time;
// - USING TIMESTAMP (CQL bigint): a Long (latest-rows.js), exact past 2^53 µs.

import { STATEMENTS } from './contract-constants.js';
import { markInstant } from './day-marks.js';
import { EncodedRows, encodedBatchItem } from './encoded-batch.js';
import { metricNames } from './reading-values.js';
import { utcDayNumber } from './timestamps.js';

/** The CQL texts, the contract's (statements.cql). */
export const CQL = Object.freeze({
  reading: STATEMENTS.reading,
  sourceDay: STATEMENTS.source_day,
  latest: STATEMENTS.latest, // the reading's own time as write timestamp: an older reading replayed later never wins
  dayChange: STATEMENTS.day_change, // which partitions were written, by hour of writing (day-marks.md)
});

// A frame layout's metric names as their UTF-8 bytes: a few layouts, each encoded once (bounded like the
// metric-layout cache).
const LAYOUT_BYTES = new Map();
const LAYOUT_BYTES_MAX = 1024;

function metricBytes(metrics) {
  let bytes = LAYOUT_BYTES.get(metrics);
  if (bytes === undefined) {
    if (LAYOUT_BYTES.size >= LAYOUT_BYTES_MAX) LAYOUT_BYTES.clear();
    bytes = metricNames(metrics).map((name) => Buffer.from(name, 'utf8'));
    LAYOUT_BYTES.set(metrics, bytes);
  }
  return bytes;
}

/** A CQL date's 4 bytes: days since the epoch, offset by 2^31. */
function dateBytes(dayNumber) {
  const bytes = Buffer.allocUnsafe(4);
  bytes.writeUInt32BE(dayNumber + 2 ** 31, 0);
  return bytes;
}

/**
 * The `readings` rows of a ReadingBatch (write-plan.js) as one UNLOGGED batch: a row per value, frames in order,
 * each frame's values in its metrics' order. Rows [source, day, metric, ts, value], each already in its wire form:
 * the source and day once per batch, a metric once per name, the timestamp once per frame, the value as the spool
 * stores it. The driver's per-value conversions (a Date to a Long, text to UTF-8, a LocalDate) cost more than the
 * rest of a row's encoding. Sent as one item of EncodedRows (encoded-batch.js); `rows` are the batch's rows.
 */
export function readingsBatch(batch) {
  // every frame of a batch is on its day
  const rows = new EncodedRows(CQL.reading, Buffer.from(batch.source, 'utf8'),
    dateBytes(utcDayNumber(batch.frames[0].ts_ms)), batch.frames, metricBytes);
  return { queries: [encodedBatchItem(rows)], logged: false, rows };
}

/** The `source_days` row saying that source has readings on day (a LocalDate). Params: [day, source]. */
export function sourceDayRequest(source, day) {
  return { query: CQL.sourceDay, params: [day, source] };
}

/**
 * The `day_changes` rows marking the (source, day) pairs (gateway/contract/day-marks.md), as one UNLOGGED batch:
 * one partition, the UTC hour bucket of now (a Date: when this attempt is sent), written_at now. Params: [bucket,
 * day, source, written_at].
 */
export function dayChangesBatch(days, now = new Date()) {
  const [bucketMs, writtenAtMs] = markInstant(now.getTime());
  const bucket = new Date(bucketMs);
  const writtenAt = new Date(writtenAtMs);
  return {
    queries: days.map(([source, day]) => ({ query: CQL.dayChange, params: [bucket, day, source, writtenAt] })),
    logged: false,
  };
}
