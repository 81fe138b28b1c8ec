// The status page's sparklines (gateway/contract/status.md, "Sparklines"): per source and metric, the least,
// greatest and last value of each 5-minute bucket of receipt times over the last 12 hours. Bounded: a few series a
// source and a fixed number in all, so neither many boards nor ever new metric names grow memory. A pure function
// of the frames fed to it and the clock readings passed in; kept in memory only (a restart starts empty).

import { contractNumber } from './contract-constants.js';

const BUCKET_MS = contractNumber('status_bucket_ms');
const BUCKETS = contractNumber('status_buckets');
const PER_SOURCE_MAX = contractNumber('status_series_per_source_max');
const SERIES_MAX = contractNumber('status_series_max');

export class SeriesTally {
  constructor({ perSourceMax = PER_SOURCE_MAX, seriesMax = SERIES_MAX, bucketMs = BUCKET_MS,
    buckets = BUCKETS } = {}) {
    Object.assign(this, { perSourceMax, seriesMax, bucketMs, buckets });
    /** @type {Map<string, Map<string, {newestMs: number, points: Array<[number, number, number, number]>}>>} */
    this.sources = new Map();
    this.count = 0;
  }

  /** An accepted frame's readings ([metric, number] pairs), read at receivedMs. */
  frame(source, receivedMs, values) {
    const bucket = Math.floor(receivedMs / this.bucketMs);
    let metrics = this.sources.get(source);
    for (const [metric, value] of values) {
      if (!Number.isFinite(value)) continue;
      let series = metrics?.get(metric);
      if (series === undefined) {
        if (this.count >= this.seriesMax || (metrics !== undefined && metrics.size >= this.perSourceMax)) continue;
        if (metrics === undefined) {
          metrics = new Map();
          this.sources.set(source, metrics);
        }
        // newestMs: an earlier reading (the clock stepped back) is left out
        series = { newestMs: -Infinity, points: [] };
        metrics.set(metric, series);
        this.count += 1;
      }
      if (receivedMs < series.newestMs) continue;
      series.newestMs = receivedMs;
      const { points } = series;
      const last = points.at(-1);
      if (last !== undefined && last[0] === bucket) {
        last[1] = Math.min(last[1], value);
        last[2] = Math.max(last[2], value);
        last[3] = value;
      } else {
        points.push([bucket, value, value, value]);
        let old = 0;
        while (points[old][0] <= bucket - this.buckets) old += 1;
        if (old) points.splice(0, old);
      }
    }
  }

  /** A source the gateway no longer tracks: its series are freed. */
  forget(source) {
    this.count -= this.sources.get(source)?.size ?? 0;
    this.sources.delete(source);
  }

  /** Map of source (with a point in the window) → [{metric, points: [[bucket start ms, min, max, last]]}], sorted
   * by metric. */
  view(nowMs) {
    const first = Math.floor(nowMs / this.bucketMs) - this.buckets; // buckets after this one are in the window
    const shown = new Map();
    for (const [source, metrics] of this.sources) {
      const entries = [];
      // metric names are ASCII (PROTOCOL.md keys, CSV columns): UTF-16 order is code point order
      for (const metric of [...metrics.keys()].sort()) {
        const points = metrics.get(metric).points.filter(([bucket]) => bucket > first)
          .map(([bucket, low, high, last]) => [bucket * this.bucketMs, low, high, last]);
        if (points.length) entries.push({ metric, points });
      }
      if (entries.length) shown.set(source, entries);
    }
    return shown;
  }
}
