// The sparklines' series (status-series.js) against gateway/contract/vectors/status_series.jsonl and /healthz's
// rule (healthz.js) against vectors/healthz.jsonl, which every gateway runs.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { health } from '../src/healthz.js';
import { SeriesTally } from '../src/status-series.js';
import { contractVectors } from '../test-support/vectors.js';

const number = (value) => (typeof value === 'string' ? Number(value) : value); // "NaN", "Infinity", "-Infinity"

describe('status_series.jsonl', () => {
  for (const c of contractVectors('status_series.jsonl')) {
    it(c.name, () => {
      const p = c.params;
      const series = new SeriesTally({ perSourceMax: p.series_per_source_max, seriesMax: p.series_max,
        bucketMs: p.bucket_ms, buckets: p.buckets });
      for (const step of c.steps) {
        if (step.frame) {
          const f = step.frame;
          series.frame(f.source, f.received_ms, f.values.map(([metric, value]) => [metric, number(value)]));
        } else if (step.forget) {
          series.forget(step.forget);
        } else {
          assert.deepEqual(Object.fromEntries(series.view(step.view)), step.expect, `view at ${step.view}`);
        }
      }
    });
  }

  it('keeps the contract bounds by default', () => {
    const series = new SeriesTally();
    for (let n = 0; n < 600; n += 1) series.frame(`s${Math.floor(n / 9)}`, 1000, [[`m${n % 9}`, 1]]);
    const sizes = [...series.view(1000).values()].map((entries) => entries.length);
    assert.equal(Math.max(...sizes), 8);
    assert.equal(sizes.reduce((a, b) => a + b, 0), 512);
  });
});

describe('healthz.jsonl', () => {
  for (const c of contractVectors('healthz.jsonl')) {
    it(c.name, () => {
      const s = c.state;
      const p = c.params;
      assert.deepEqual(health({ nowMs: s.now_ms, startedMs: s.started_ms, cassandraDownSinceMs: s.cassandra_down_since_ms,
        oldestUnsentMs: s.oldest_unsent_ms, newestFrameMs: s.newest_frame_ms },
      { cassandraDownMs: p.cassandra_down_ms, spoolLagMs: p.spool_lag_ms, silentMs: p.silent_ms }),
      [c.status, c.reason]);
    });
  }
});
