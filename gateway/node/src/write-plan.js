// Spooled frames → the Cassandra writes that store them, grouped for speed (gateway/contract/cassandra-writes.md,
// Batches; vectors/write_plan.jsonl).
//
// Rows of one partition (source, UTC day) travel in one UNLOGGED batch: a single-partition batch is applied as one
// mutation on one replica set, which is what makes batching fast. Batches never split a frame, so a frame is
// acknowledged exactly when the batch that holds it is.
//
// A frame is a spool row, {id, source, ts_ms, received_ms, metrics, vals}: `metrics` the names joined by commas,
// `vals` a Buffer of big-endian doubles (reading-values.js).

import { DOUBLE_BYTES, unpackValues } from './reading-values.js';
import { utcDay, utcDayNumber } from './timestamps.js';

/** The frames of one readings partition sent as one batch, with their row count (one row per value). */
export class ReadingBatch {
  constructor(source, day) {
    this.source = source;
    this.day = day; // a LocalDate (timestamps.js utcDay)
    this.frames = [];
    this.rows = 0;
  }
}

/** The newest reading of a (source, metric): one row of `latest`. */
export class LatestRow {
  constructor(source, metric, ts_ms, value) {
    this.source = source;
    this.metric = metric;
    this.ts_ms = ts_ms;
    this.value = value;
    Object.freeze(this);
  }
}

/**
 * The writes that store frames (spool order), grouped into batches of at most batchRows rows unless one frame has
 * more. Returns {batches, latest, days}:
 * - batches: ReadingBatch[] in the order of each batch's first frame, frames in spool order;
 * - latest: LatestRow[], the newest value per (source, metric) among the frames (on equal times the later frame);
 * - days: [source, day][], every (source, UTC day) the frames touch, in order of first appearance (day a
 *   LocalDate).
 */
export function planWrites(frames, batchRows) {
  const open = new Map(); // source → Map(day number → the partition's batch being filled)
  const batches = [];
  const newest = new Map(); // per source and metric names: frames share a few layouts
  for (const frame of frames) {
    const dayNumber = utcDayNumber(frame.ts_ms);
    let ofSource = open.get(frame.source);
    if (ofSource === undefined) open.set(frame.source, ofSource = new Map());
    const rows = Math.floor(frame.vals.length / DOUBLE_BYTES);
    let batch = ofSource.get(dayNumber);
    if (batch === undefined || (batch.rows && batch.rows + rows > batchRows)) {
      batch = new ReadingBatch(frame.source, utcDay(frame.ts_ms));
      ofSource.set(dayNumber, batch);
      batches.push(batch);
    }
    batch.frames.push(frame);
    batch.rows += rows;
    let layouts = newest.get(frame.source);
    if (layouts === undefined) newest.set(frame.source, layouts = new Map());
    const current = layouts.get(frame.metrics);
    if (current === undefined || frame.ts_ms >= current.ts_ms) layouts.set(frame.metrics, frame);
  }
  return { batches, latest: latestOf(newest), days: daysOf(batches) };
}

/** The newest value per (source, metric) of the newest frame per layout. */
function latestOf(newest) {
  const frames = [];
  for (const layouts of newest.values()) frames.push(...layouts.values());
  frames.sort((a, b) => a.id - b.id); // on equal times the later frame wins
  const latest = new Map(); // `metric,source` → LatestRow: a metric name has no comma, so one key per pair
  for (const frame of frames) {
    for (const [metric, value] of unpackValues(frame.metrics, frame.vals)) {
      const key = `${metric},${frame.source}`;
      const current = latest.get(key);
      if (current === undefined || frame.ts_ms >= current.ts_ms) {
        latest.set(key, new LatestRow(frame.source, metric, frame.ts_ms, value));
      }
    }
  }
  return [...latest.values()];
}

function daysOf(batches) {
  const seen = new Set();
  const days = [];
  for (const batch of batches) {
    const key = `${batch.day}|${batch.source}`; // the ISO date has no '|': one key per pair
    if (seen.has(key)) continue;
    seen.add(key);
    days.push([batch.source, batch.day]);
  }
  return days;
}
