// fsync = "deferred" holds frames in memory only while holding is safe (gateway/contract/spool.md, "Held only while
// holding is safe"; the cases of vectors/hold.jsonl are driven in contract-vectors.test.js): the link the sender
// reports, the file as of the last commit, the idle loop's next commit, the holding gauge, and the ingest woken when
// holding turns unsafe. The spool's clock is a number the tests move.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Credits } from '../src/credits.js';
import { frame as decodedFrame } from '../src/decoded.js';
import { Ingest } from '../src/ingest.js';
import { createMetrics } from '../src/metrics.js';
import { Spool, newFrame } from '../src/spool/index.js';
import { scratchPaths } from '../test-support/scratch.js';

const tmpPath = scratchPaths('spool-hold-test-');

const frames = (n, start = 0) => Array.from({ length: n },
  (_, k) => newFrame('G', 1_000 + start + k, 2_000, [['n', k]]));
const fileIds = (spool) => spool._store.db.prepare('SELECT id FROM frames ORDER BY id').pluck().all();
const tick = () => new Promise((resolve) => { setImmediate(resolve); });
async function gauge(metric) {
  return (await metric.get()).values[0]?.value;
}

describe('holding is safe only while connected, the last write succeeded and the file holds no frame', () => {
  it('commits at once until the sender says it is connected', () => {
    const clock = { now: 0 };
    const spool = new Spool(tmpPath(), { fsync: 'deferred', holdMs: 200, clock: () => clock.now });
    assert.equal(spool.holding, false); // at open: not connected yet
    assert.equal(spool.commit(frames(2), []), 2);
    assert.deepEqual(fileIds(spool), [1, 2]);
    spool.commit([], [[1, 2]]);
    assert.equal(spool.holding, false);
    assert.equal(spool.setLink(true, true), false); // nothing held: nothing due
    assert.equal(spool.holding, true);
    assert.equal(spool.commit(frames(1, 2), []), 0);
    assert.deepEqual([spool.heldFrames, fileIds(spool)], [1, []]);
    spool.close();
  });

  it('makes every held frame due at once when a write fails or the connection is lost', () => {
    for (const [connected, writeOk] of [[true, false], [false, true]]) {
      const clock = { now: 0 };
      const spool = new Spool(tmpPath(), { fsync: 'deferred', holdMs: 200, clock: () => clock.now });
      spool.setLink(true, true);
      spool.commit(frames(2), []);
      assert.equal(spool.flushDelayMs(), 200);
      assert.equal(spool.setLink(connected, writeOk), true); // held frames became due: the caller wakes the ingest
      assert.equal(spool.flushDelayMs(), 0); // the idle loop's next commit: now, not after the hold
      assert.equal(spool.commit([], []), 2);
      assert.deepEqual([spool.heldFrames, fileIds(spool), spool.flushDelayMs()], [0, [1, 2], null]);
      spool.close();
    }
  });

  it('never holds with batch or interval', () => {
    const spool = new Spool(tmpPath());
    assert.equal(spool.setLink(true, true), false);
    assert.equal(spool.holding, false);
    spool.close();
  });
});

describe('the ingest and the link', () => {
  const CONFIG = { decode: { duplicate_window_s: 10, max_sources: 1000 },
    time: { max_future_s: 60, max_age_days: 366 }, spool: { when_full: 'pause' } };

  it('commits the held frames at once when the link turns unsafe, and keeps the holding gauge', async () => {
    const clock = { now: 0 }; // never moves: only the link makes the held frames due
    const spool = new Spool(tmpPath(), { fsync: 'deferred', holdMs: 200, clock: () => clock.now });
    const metrics = createMetrics();
    const ingest = new Ingest(CONFIG, spool, metrics, () => {});
    assert.equal(await gauge(metrics.spool_holding), 0); // at open: not connected
    ingest.link(true, true);
    assert.equal(await gauge(metrics.spool_holding), 1);
    ingest.put({ receivedMs: Date.now(), credits: new Credits(1),
      frames: [decodedFrame('v1', 'G', 1, null, [['n', 1]]), decodedFrame('v1', 'G', 2, null, [['n', 2]])] });
    await tick();
    assert.deepEqual([spool.heldFrames, fileIds(spool)], [2, []]);
    ingest.link(true, false);
    assert.equal(await gauge(metrics.spool_holding), 0);
    await tick();
    assert.deepEqual([spool.heldFrames, fileIds(spool)], [0, [1, 2]]);
    ingest.link(true, true);
    assert.equal(await gauge(metrics.spool_holding), 0); // the file holds frames: until they are acknowledged
    ingest.acknowledge([1, 2]);
    await tick();
    assert.equal(await gauge(metrics.spool_holding), 1);
    await ingest.stop();
    spool.close();
  });
});
