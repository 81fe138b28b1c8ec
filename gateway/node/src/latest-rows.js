// `latest` is a view of the newest value per (source, metric), not a record: rows are coalesced in memory and
// written now and then, each with its reading's time as write timestamp, so the view never moves back
// (gateway/contract/cassandra-writes.md, Flush periods).

import cassandra from 'cassandra-driver';

import { CQL } from './reading-batches.js';

const { Long } = cassandra.types;

/** The newest LatestRow (write-plan.js) per (source, metric) since the last take(). */
export class LatestRows {
  constructor() {
    this.rows = new Map(); // `metric,source` → LatestRow (a metric name has no comma: one key per pair)
  }

  /** How many rows are waiting (0: nothing to write). */
  get size() {
    return this.rows.size;
  }

  /** Keeps each row unless a newer one of its (source, metric) is kept; an equal time replaces (the later wins). */
  merge(rows) {
    for (const row of rows) {
      const key = `${row.metric},${row.source}`;
      const current = this.rows.get(key);
      if (current === undefined || row.ts_ms >= current.ts_ms) this.rows.set(key, row);
    }
  }

  /** The coalesced rows, forgotten here. */
  take() {
    const rows = [...this.rows.values()];
    this.rows = new Map();
    return rows;
  }
}

/**
 * One UNLOGGED batch per source (one partition each), in order of each source's first row. Params: [source,
 * metric, ts (Date), value (number: a CQL double), write timestamp in µs (Long: ts_ms × 1000)].
 */
export function latestBatches(rows) {
  const bySource = new Map();
  for (const row of rows) {
    let queries = bySource.get(row.source);
    if (queries === undefined) bySource.set(row.source, queries = []);
    const params = [row.source, row.metric, new Date(row.ts_ms), row.value, writeTimestampUs(row.ts_ms)];
    queries.push({ query: CQL.latest, params });
  }
  return [...bySource.values()].map((queries) => ({ queries, logged: false }));
}

/** USING TIMESTAMP of a reading at ts_ms: its time in µs, exact (a Number would round past 2^53). */
export function writeTimestampUs(tsMs) {
  return Long.fromNumber(tsMs).multiply(1000);
}
