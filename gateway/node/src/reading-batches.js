// The statements the gateway writes with, and their parameters, as cassandra-driver takes them (the Python
// gateway's reading_batches.py, and the statement texts of its cassandra_session.py, character for character).
//
// A statement is {query, params} for one row or {queries: [{query, params}, ...], logged: false} for an UNLOGGED
// batch: every batch here holds rows of one partition, which Cassandra applies as one mutation on one replica set.
// Send them prepared (client.execute / client.batch with prepare: true, isIdempotent: true: the same reading has
// the same key, so a write may be repeated); the driver then routes a batch by its first row's partition key.
//
// Parameter values are chosen so that the driver writes exactly the bytes of the Python gateway, prepared or not:
// - readings `value` (CQL double): the reading's 8 bytes as the spool stores them (a Buffer goes out as it is),
//   as Python sends them; no double → number → double round trip per row;
// - timestamps (CQL timestamp): a Date (ms since the epoch, UTC);
// - days (CQL date): the driver's LocalDate, made from the UTC day (timestamps.js utcDay); never a Date, whose day
//   the driver takes in local time;
// - USING TIMESTAMP (CQL bigint): a Long (latest-rows.js), exact past 2^53 µs.

import { DOUBLE_BYTES, metricNames } from './reading-values.js';

/** The CQL texts, identical to the Python gateway's (cassandra_session.prepare). */
export const CQL = Object.freeze({
  reading: 'INSERT INTO readings (source, day, metric, ts, value) VALUES (?, ?, ?, ?, ?)',
  sourceDay: 'INSERT INTO source_days (day, source) VALUES (?, ?)',
  // The reading's own time as write timestamp: an older reading replayed later never wins.
  latest: 'INSERT INTO latest (source, metric, ts, value) VALUES (?, ?, ?, ?) USING TIMESTAMP ?',
  // For incremental analytics (schema/002): which partitions were written, by hour of writing.
  dayChange: 'INSERT INTO day_changes (bucket, day, source, written_at) VALUES (?, ?, ?, ?)',
});

const HOUR_MS = 3_600_000;

/**
 * The `readings` rows of a ReadingBatch (write-plan.js) as one UNLOGGED batch: a row per value, frames in order,
 * each frame's values in its metrics' order. Params: [source, day, metric, ts, value].
 */
export function readingsBatch(batch) {
  const { source, day } = batch;
  const queries = [];
  for (const frame of batch.frames) {
    const ts = new Date(frame.ts_ms);
    const { vals } = frame;
    const names = metricNames(frame.metrics);
    for (let i = 0; i < names.length; i++) {
      const value = vals.subarray(i * DOUBLE_BYTES, (i + 1) * DOUBLE_BYTES);
      queries.push({ query: CQL.reading, params: [source, day, names[i], ts, value] });
    }
  }
  return { queries, logged: false };
}

/** The `source_days` row saying that source has readings on day (a LocalDate). Params: [day, source]. */
export function sourceDayRequest(source, day) {
  return { query: CQL.sourceDay, params: [day, source] };
}

/**
 * The `day_changes` rows of the (source, day) pairs written, as one UNLOGGED batch: one partition, the UTC hour
 * bucket of now (a Date). Params: [bucket, day, source, written_at].
 */
export function dayChangesBatch(days, now = new Date()) {
  const bucket = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
  return {
    queries: days.map(([source, day]) => ({ query: CQL.dayChange, params: [bucket, day, source, now] })),
    logged: false,
  };
}
