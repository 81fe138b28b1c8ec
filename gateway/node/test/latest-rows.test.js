// Coalescing `latest` rows and batching them per source (their bytes are checked in reading-batches.test.js, the
// contract's cases in contract-vectors.test.js).

import assert from 'node:assert/strict';
import { it } from 'node:test';

import cassandra from 'cassandra-driver';

import { LatestRows, latestBatches, writeTimestampUs } from '../src/latest-rows.js';
import { CQL } from '../src/reading-batches.js';
import { LatestRow } from '../src/write-plan.js';

const { Long } = cassandra.types;
const bySourceAndMetric = (a, b) => (a.source + a.metric < b.source + b.metric ? -1 : 1);

it('keeps the newest reading per source and metric, and an equal time replaces', () => {
  const latest = new LatestRows();
  assert.equal(latest.size, 0);
  latest.merge([new LatestRow('G', 'temp_in', 2000, 20.0), new LatestRow('G', 'light', 1000, 5.0)]);
  latest.merge([new LatestRow('G', 'temp_in', 1000, 19.0), // older, replayed: ignored
    new LatestRow('G', 'light', 1000, 6.0), // same time: the later one wins
    new LatestRow('H', 'temp_in', 500, 1.0)]);
  assert.equal(latest.size, 3);
  const rows = latest.take().sort(bySourceAndMetric);
  assert.equal(latest.size, 0);
  assert.deepEqual(latest.take(), []);
  assert.deepEqual(rows, [new LatestRow('G', 'light', 1000, 6.0), new LatestRow('G', 'temp_in', 2000, 20.0),
    new LatestRow('H', 'temp_in', 500, 1.0)]);
});

it('one UNLOGGED batch per source, each row with its time in µs as write timestamp', () => {
  const batches = latestBatches([new LatestRow('G', 'a', 1000, 1.5), new LatestRow('H', 'a', 2000, 2.5),
    new LatestRow('G', 'b', 3000, -4.0)]);
  assert.equal(batches.length, 2);
  assert.ok(batches.every((batch) => batch.logged === false));
  const rows = batches.map((batch) => batch.queries.map(({ query, params: [source, metric, ts, value, us] }) =>
    [query, source, metric, ts.getTime(), value, us.toString()]));
  assert.deepEqual(rows, [
    [[CQL.latest, 'G', 'a', 1000, 1.5, '1000000'], [CQL.latest, 'G', 'b', 3000, -4.0, '3000000']],
    [[CQL.latest, 'H', 'a', 2000, 2.5, '2000000']],
  ]);
  assert.deepEqual(latestBatches([]), []);
});

it('the write timestamp is an exact Long', () => {
  assert.ok(writeTimestampUs(1).equals(Long.fromNumber(1000)));
  assert.equal(writeTimestampUs(-1).toString(), '-1000');
  assert.equal(writeTimestampUs(72_057_594_037_929).toString(), '72057594037929000');
});
