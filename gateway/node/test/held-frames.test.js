// The deferred policy's pure parts (gateway/contract/spool.md, "`deferred` in detail"): frames held in memory
// (held-frames.js) and receipt stamps as ceilings (receipt-ceilings.js). Times are plain numbers: no clock.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { HeldFrames, MAX_HELD, mergeById } from '../src/spool/held-frames.js';
import { LEAD_MS, MARGIN_MS, REFRESH_MS, ReceiptCeilings } from '../src/spool/receipt-ceilings.js';

const frame = (id) => ({ id, source: 'G', ts_ms: 1000 + id, received_ms: 2000 + id, metrics: 'n',
  vals: Buffer.alloc(8) });
const frames = (first, last) => Array.from({ length: last - first + 1 }, (_, i) => frame(first + i));
const ids = (list) => list.map((f) => f.id);

describe('HeldFrames', () => {
  it('takes held frames above a cursor, oldest first, at most limit', () => {
    const held = new HeldFrames(200);
    held.hold(frames(11, 15), 0);
    held.hold(frames(16, 20), 5);
    assert.deepEqual(ids(held.take(0, 100)), ids(frames(11, 20)));
    assert.deepEqual(ids(held.take(13, 4)), [14, 15, 16, 17]);
    assert.deepEqual(held.take(20, 10), []);
    held.acknowledge(14, 16);
    assert.deepEqual(ids(held.take(12, 3)), [13, 17, 18]);
    assert.equal(held.size, 7);
  });

  it('says whether an acknowledged range had ids it did not hold (rows to delete from the file)', () => {
    const held = new HeldFrames(200);
    held.hold(frames(11, 15), 0);
    assert.equal(held.acknowledge(11, 12), false); // all held: nothing to delete
    assert.equal(held.acknowledge(12, 13), true); // 12 is gone already
    assert.equal(held.acknowledge(1, 10), true); // an earlier run's rows
    assert.equal(held.acknowledge(14, 15), false);
    assert.equal(held.size, 0);
    assert.equal(held.dueAt(), null);
  });

  it('makes frames due after holdMs, keeps them until committed', () => {
    const held = new HeldFrames(200);
    held.hold(frames(1, 2), 1000);
    held.hold(frames(3, 3), 1100);
    assert.equal(held.dueAt(), 1200);
    assert.deepEqual(held.due(1199), []);
    assert.deepEqual(ids(held.due(1200)), [1, 2]);
    assert.deepEqual(ids(held.due(1200)), [1, 2]); // still held: the commit may fail
    held.acknowledge(2, 2);
    held.committed(held.due(1250));
    assert.equal(held.size, 1);
    assert.equal(held.dueAt(), 1300);
    assert.deepEqual(ids(held.due(0, true)), [3]); // everything, at a clean stop
  });

  it('makes the oldest due at once past maxHeld', () => {
    const held = new HeldFrames(200, 5);
    held.hold(frames(1, 8), 0);
    assert.equal(held.dueAt(), -Infinity);
    assert.deepEqual(ids(held.due(1)), [1, 2, 3]);
    held.committed(held.due(1));
    assert.equal(held.dueAt(), 200);
  });

  it('takes in what it returns, not in what it holds', () => {
    const held = new HeldFrames(200);
    for (let id = 1; id <= MAX_HELD; id++) held.hold([frame(id)], id);
    const lookups = [];
    const get = held.frames.get.bind(held.frames);
    held.frames.get = (id) => { lookups.push(id); return get(id); };
    assert.deepEqual(ids(held.take(MAX_HELD - 3, 100)), [MAX_HELD - 2, MAX_HELD - 1, MAX_HELD]);
    assert.deepEqual(lookups, [MAX_HELD - 2, MAX_HELD - 1, MAX_HELD]);
  });

  it('drops what is behind its head once most of its FIFO is', () => {
    const held = new HeldFrames(200);
    held.hold(frames(1, 3000), 0);
    held.acknowledge(1, 2990);
    assert.equal(held.dueAt(), 200);
    assert.equal(held.ids.length, 10);
    assert.deepEqual(ids(held.take(0, 100)), ids(frames(2991, 3000)));
  });
});

describe('mergeById', () => {
  it('merges held and committed frames in id order, each id once, at most limit', () => {
    const held = frames(5, 8);
    const committed = [frame(1), frame(3), frame(5), frame(9)]; // 5: committed between the two reads
    assert.deepEqual(ids(mergeById(held, committed, 100)), [1, 3, 5, 6, 7, 8, 9]);
    assert.equal(mergeById(held, committed, 100)[2], committed[2]);
    assert.deepEqual(ids(mergeById(held, committed, 4)), [1, 3, 5, 6]);
    assert.deepEqual(ids(mergeById([], committed, 2)), [1, 3]);
    assert.deepEqual(ids(mergeById(held, [], 2)), [5, 6]);
  });
});

describe('ReceiptCeilings', () => {
  it('writes a ceiling only when a stamp passes its source\'s stored row (stamps on time)', () => {
    const ceilings = new ReceiptCeilings([['A', 10_000]], 1000);
    assert.deepEqual(ceilings.rowsFor([['A', 9_000]], 9_000), []);
    ceilings.committed([['A', 9_000]], []);
    assert.deepEqual(ceilings.rowsFor([['A', 10_001]], 10_001), [['A', 10_001 + LEAD_MS]]);
    ceilings.committed([['A', 10_001]], [['A', 10_001 + LEAD_MS]]);
    assert.deepEqual(ceilings.rowsFor([['A', 10_001 + LEAD_MS]], 10_001 + LEAD_MS), []);
    // A new source passes its (missing) row; A's ceiling is not near its last stamp (10,001): not raised.
    assert.deepEqual(ceilings.rowsFor([['B', 20_000]], 20_000), [['B', 20_000 + LEAD_MS]]);
  });

  it('raises the other sources stamped in this run whose ceiling is near, in the same commit', () => {
    const ceilings = new ReceiptCeilings([['A', 20_000], ['B', 20_000], ['C', 20_000]], 1000);
    const [a, b] = [20_001 - REFRESH_MS, 20_000 - REFRESH_MS];
    ceilings.committed([['A', a], ['B', b]], []);
    // C passes: A (its stamp + REFRESH_MS > 20,000) comes along, B (+ REFRESH_MS <= 20,000) and D (not stamped) do
    // not.
    assert.deepEqual(ceilings.rowsFor([['C', 20_001]], 20_001), [['A', 20_001 + LEAD_MS], ['C', 20_001 + LEAD_MS]]);
    assert.deepEqual(ceilings.rowsFor([['C', 19_000]], 19_000), []); // no stamp passed: no commit for them
    // A commit made anyway (seqs, due frames) takes the near ones along.
    assert.deepEqual(ceilings.rowsFor([['C', 19_000]], 19_000, true),
      [['A', 19_000 + LEAD_MS], ['C', 19_000 + LEAD_MS]]);
  });

  /** Stamps on receipt for `frames` frames stepMs apart from the wall clock startMs, the stamper continuing above
   * firstTs (max(received, last + 1)), every commit done; alongEvery: every so many frames a commit is made anyway.
   * Returns [commits made for the stamps, the highest row written]. */
  function runLate(ceilings, firstTs, startMs, frames, stepMs, alongEvery = 0) {
    let [commits, ts, highest] = [0, firstTs, 0];
    for (let n = 0; n < frames; n++) {
      const nowMs = startMs + n * stepMs;
      ts = Math.max(nowMs, ts + 1);
      assert.ok(ts - nowMs <= LEAD_MS, `a stamp ${ts - nowMs} ms late`);
      const along = alongEvery > 0 && n % alongEvery === 0;
      const rows = ceilings.rowsFor([['G', ts]], nowMs, along);
      for (const [, row] of rows) {
        assert.ok(row <= nowMs + LEAD_MS && row > ts, `row ${row} at ${nowMs} for ${ts}`);
        highest = Math.max(highest, row);
      }
      if (rows.length && !along) commits += 1;
      ceilings.committed([['G', ts]], rows);
    }
    return [commits, highest];
  }

  it('after a crash follows the clock, not the late stamps: lateness never adds up, a commit about a minute', () => {
    let now = 1_000_000;
    let stored = now + LEAD_MS - 2_000; // written 2 s before the crash, the restart now
    const [commits, highest] = runLate(new ReceiptCeilings([['G', stored]], 10), stored, now, 12_000, 10);
    assert.ok(commits <= 3, `${commits} commits`); // 120 s at 100 frames/s: at 0 s, 20 s (stamps reach it), 80 s
    assert.ok(highest <= now + 120_000 + LEAD_MS);
    // Crashes in a row (restarted 2 s later), each run 3-50 s long: the lateness stays within the lead.
    for (const runS of [3, 5, 10, 20, 30, 45, 50, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]) {
      const start = now + 2_000;
      const [, high] = runLate(new ReceiptCeilings([['G', stored]], 10), stored, start, runS * 100, 10, 700);
      [now, stored] = [start + runS * 1000, Math.max(stored, high)];
      assert.ok(stored - now <= LEAD_MS);
    }
  });

  it('with a clock that went back sets each ceiling MARGIN_MS above the stamp: a commit per MARGIN_MS frames', () => {
    const ceilings = new ReceiptCeilings([['G', 10_000_000]], 10);
    let [ts, commits] = [10_000_000, 0];
    for (let n = 0; n < 5_000; n++) {
      ts += 1;
      const rows = ceilings.rowsFor([['G', ts]], 1_000 + n * 100);
      for (const [, row] of rows) assert.equal(row, ts + MARGIN_MS);
      commits += rows.length;
      ceilings.committed([['G', ts]], rows);
    }
    assert.equal(commits, 5_000 / MARGIN_MS);
  });

  it('writes the real last stamps at a clean stop, once', () => {
    const ceilings = new ReceiptCeilings([], 1000);
    const rows = ceilings.rowsFor([['A', 100], ['B', 200]], 200);
    ceilings.committed([['A', 100], ['B', 200]], rows);
    ceilings.committed([['A', 150]], []);
    assert.deepEqual(ceilings.finalRows(), [['A', 150], ['B', 200]]);
    ceilings.committed([], ceilings.finalRows());
    assert.deepEqual(ceilings.finalRows(), []);
  });

  it('keeps at most twice max_sources of each map, the highest values', () => {
    const ceilings = new ReceiptCeilings([], 2);
    for (const [i, source] of ['A', 'B', 'C', 'D', 'E'].entries()) {
      ceilings.committed([[source, i]], ceilings.rowsFor([[source, i]], i));
    }
    assert.deepEqual([...ceilings.given.keys()], ['D', 'E']);
    assert.deepEqual([...ceilings.stored.keys()], ['D', 'E']);
  });
});
