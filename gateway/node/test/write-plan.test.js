// Write planning: per-partition batches that never split a frame, the (source, day) pairs, the newest value per
// (source, metric) (the contract's cases are in contract-vectors.test.js).

import assert from 'node:assert/strict';
import { it } from 'node:test';

import cassandra from 'cassandra-driver';

import { packValues } from '../src/reading-values.js';
import { DAY_MS, utcDay } from '../src/timestamps.js';
import { LatestRow, ReadingBatch, planWrites } from '../src/write-plan.js';

const { LocalDate } = cassandra.types;

/** A spool row as the spool gives it back. */
function frame(id, source, ts, values) {
  return { id, source, ts_ms: ts, received_ms: 0, ...packValues(Object.entries(values)) };
}

const summary = (plan) => plan.batches.map((b) => [b.source, String(b.day), b.frames.map((f) => f.id), b.rows]);

it('batches group by partition and never split a frame', () => {
  const midnight = 1_774_742_400_000; // 2026-03-29T00:00Z
  const frames = [frame(1, 'G', midnight - 1, { a: 1, b: 2 }), frame(2, 'G', midnight, { a: 3, b: 4 }),
    frame(3, 'H', midnight, { a: 5 }), frame(4, 'G', midnight + 1, { a: 6, b: 7 }),
    frame(5, 'G', midnight + 2, { a: 8 })];
  const plan = planWrites(frames, 4);
  assert.deepEqual(summary(plan), [['G', '2026-03-28', [1], 2], ['G', '2026-03-29', [2, 4], 4],
    ['H', '2026-03-29', [3], 1], ['G', '2026-03-29', [5], 1]]);
  assert.ok(plan.batches.every((b) => b instanceof ReadingBatch && b.day instanceof LocalDate));
  assert.deepEqual(plan.days.map(([source, day]) => [source, String(day)]),
    [['G', '2026-03-28'], ['G', '2026-03-29'], ['H', '2026-03-29']]); // each pair once, in order of appearance
  assert.ok(plan.days.every(([, day]) => day instanceof LocalDate));
});

it('latest takes the newest reading whatever the order', () => {
  const plan = planWrites([frame(1, 'G', 200, { a: 2.0 }), frame(2, 'G', 100, { a: 1.0, b: 5.0 }),
    frame(3, 'G', 150, { b: 6.0 }), frame(4, 'H', 50, { a: 9.0 })], 100);
  assert.ok(plan.latest.every((row) => row instanceof LatestRow && Object.isFrozen(row)));
  const latest = Object.fromEntries(plan.latest.map((r) => [`${r.source}.${r.metric}`, [r.ts_ms, r.value]]));
  assert.deepEqual(latest, { 'G.a': [200, 2.0], 'G.b': [150, 6.0], 'H.a': [50, 9.0] });
  assert.equal(plan.latest.length, 3);
});

it('on equal times the later frame is latest', () => {
  const plan = planWrites([frame(1, 'G', 100, { a: 1.0, b: 1.0 }), frame(2, 'G', 100, { a: 2.0 })], 100);
  assert.deepEqual(plan.latest.map((r) => [r.metric, r.value]).sort(), [['a', 2.0], ['b', 1.0]]);
  const sameLayout = planWrites([frame(1, 'G', 100, { a: 1.0 }), frame(2, 'G', 100, { a: 2.0 })], 100);
  assert.deepEqual(sameLayout.latest.map((r) => r.value), [2.0]);
});

it('a frame larger than a batch gets its own', () => {
  const big = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`m${i}`, i]));
  const plan = planWrites([frame(1, 'G', 1, big), frame(2, 'G', 2, { a: 1 })], 5);
  assert.deepEqual(plan.batches.map((b) => b.rows), [7, 1]);
});

it('no frames, no writes', () => {
  assert.deepEqual(planWrites([], 10), { batches: [], latest: [], days: [] });
});

// A property over many random plans, from a seeded generator.
function random(seed) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

it('every reading is planned once, in its partition, in batches of at most batch_rows unless alone', () => {
  const next = random(20_260_329);
  for (let run = 0; run < 300; run++) {
    const batchRows = 1 + Math.floor(next() * 6);
    const frames = Array.from({ length: Math.floor(next() * 41) }, (_, i) => {
      const values = {};
      for (const metric of ['a', 'b', 'c']) if (next() < 0.5) values[metric] = (next() - 0.5) * 2e6;
      if (Object.keys(values).length === 0) values.a = 0;
      return frame(i + 1, next() < 0.5 ? 'G' : 'H', Math.floor(next() * 3 * DAY_MS), values);
    });
    const plan = planWrites(frames, batchRows);
    const planned = plan.batches.flatMap((b) => b.frames.map((f) => [f.id, b.source, String(b.day)]));
    planned.sort((x, y) => x[0] - y[0]);
    assert.deepEqual(planned, frames.map((f) => [f.id, f.source, String(utcDay(f.ts_ms))]), `run ${run}`);
    assert.ok(plan.batches.every((b) => b.rows <= batchRows || b.frames.length === 1), `run ${run}`);
    assert.ok(plan.batches.every((b) => b.rows === b.frames.reduce((n, f) => n + f.vals.length / 8, 0)));
    for (const b of plan.batches) { // frames in spool order within a batch
      assert.deepEqual(b.frames.map((f) => f.id), b.frames.map((f) => f.id).sort((x, y) => x - y));
    }
  }
});
