// fsync = "deferred" on a real spool file (gateway/contract/spool.md, "`deferred` in detail"): frames held in memory
// and taken with the committed ones, committed only when not acknowledged in time, ids above every id given,
// receipt stamps as ceilings, the unclean stop; and the ingest that drives it (its counter, its timer, its stop).
// The spool's clock is a number the tests move: no timing depends on the machine.

import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { describe, it } from 'node:test';

import { Credits } from '../src/credits.js';
import { frame as decodedFrame } from '../src/decoded.js';
import { Ingest } from '../src/ingest.js';
import { setupLogging } from '../src/logs.js';
import { createMetrics } from '../src/metrics.js';
import { CHECKPOINT_IDLE_MS } from '../src/spool/policies.js';
import { LEAD_MS } from '../src/spool/receipt-ceilings.js';
import { reportUncleanStop } from '../src/service.js';
import { Spool, SpoolFull, newFrame } from '../src/spool/index.js';
import { scratchPaths } from '../test-support/scratch.js';

const frames = (n, start = 0, source = 'G') => Array.from({ length: n }, (_, k) => {
  const i = start + k;
  return newFrame(source, 1_000 + i, 2_000 + i, [['temp_in', i + 0.5], ['light', i]]);
});
const columns = (f) => [f.source, f.ts_ms, f.received_ms, f.metrics, f.vals.toString('hex')];
const ids = (list) => list.map((f) => f.id);

const tmpPath = scratchPaths('spool-deferred-test-');

/** A deferred spool on the clock clock.now (ms) and the wall clock clock.wall (default 0), holding frames 200 ms, its
 * sender connected (holding is safe while the file holds no frame). */
function openDeferred(path, clock, options = {}) {
  const spool = new Spool(path, { fsync: 'deferred', holdMs: 200, clock: () => clock.now,
    wallClock: () => clock.wall ?? 0, ...options });
  spool.setLink(true, true);
  return spool;
}
const fileIds = (spool) => spool._store.db.prepare('SELECT id FROM frames ORDER BY id').pluck().all();
const storedStamps = (spool) => Object.fromEntries(spool._store.db.prepare('SELECT source, last_ts_ms FROM receipt_stamps')
  .raw().all());

/** The statements run on the spool's writer connection (BEGIN IMMEDIATE ... COMMIT) from now on. */
function watchTransactions(spool) {
  const statements = [];
  const exec = spool._store.db.exec.bind(spool._store.db);
  spool._store.db.exec = (sql) => { statements.push(sql); return exec(sql); };
  return statements;
}

describe('fsync "deferred": the spool', () => {
  it('is synchronous=FULL on both connections, with no WAL fsync to await', async () => {
    const spool = new Spool(tmpPath(), { fsync: 'deferred' });
    for (const db of [spool._store.db, spool._store.reader]) assert.equal(db.pragma('synchronous', { simple: true }), 2);
    assert.equal(spool._policy._walSync, undefined); // its commits are fsynced inside: nothing to await
    await spool.whenDurable();
    spool.close();
  });

  it('takes held frames and committed rows together, in id order, each once', () => {
    const clock = { now: 0 };
    const spool = openDeferred(tmpPath(), clock);
    const sent = frames(5);
    spool.commit(sent.slice(0, 3), []);
    clock.now = 100;
    spool.commit(sent.slice(3), []); // 4 and 5 are held
    clock.now = 200;
    assert.equal(spool.commit([], []), 3); // ids 1-3 were not acknowledged in time
    assert.deepEqual(fileIds(spool), [1, 2, 3]);
    assert.equal(spool.depth, 5);
    assert.equal(spool.heldFrames, 2);
    const taken = spool.take(0, 10);
    assert.deepEqual(ids(taken), [1, 2, 3, 4, 5]);
    assert.deepEqual(taken.map(columns), sent.map(columns));
    assert.deepEqual(ids(spool.take(2, 2)), [3, 4]);
    let queries = 0;
    const select = spool._store._take;
    spool._store._take = { all: (...args) => { queries += 1; return select.all(...args); } };
    assert.deepEqual(ids(spool.take(3, 10)), [4, 5]);
    assert.equal(queries, 0); // no committed row above 3: the file is not read
    assert.deepEqual(ids(spool.take(1, 10)), [2, 3, 4, 5]);
    assert.equal(queries, 1);
    spool.close();
  });

  it('writes nothing for frames acknowledged in time, not even an empty transaction', () => {
    const clock = { now: 0 };
    const spool = openDeferred(tmpPath(), clock);
    const transactions = watchTransactions(spool);
    assert.equal(spool.commit(frames(2), []), 0);
    assert.equal(spool.depth, 2);
    clock.now = 199;
    assert.equal(spool.commit([], [[1, 2]]), 0);
    clock.now = 10_000;
    assert.equal(spool.commit([], []), 0);
    assert.deepEqual(transactions, []);
    assert.deepEqual(fileIds(spool), []);
    assert.equal(spool.depth, 0);
    assert.equal(spool.flushDelayMs(), null);
    spool.close();
  });

  it('commits a frame not acknowledged in time with its id; it survives a reopen and its ack deletes it', () => {
    const clock = { now: 0 };
    const path = tmpPath();
    const spool = openDeferred(path, clock);
    const sent = frames(3);
    spool.commit(sent.slice(0, 2), []);
    clock.now = 100;
    spool.commit(sent.slice(2), []);
    assert.equal(spool.flushDelayMs(), 100);
    clock.now = 200;
    assert.equal(spool.flushDelayMs(), 0);
    assert.equal(spool.commit([], []), 2);
    assert.deepEqual(fileIds(spool), [1, 2]);
    assert.equal(spool.holding, false); // the file holds frames: 3 is due at once
    assert.equal(spool.flushDelayMs(), 0);
    const other = new Spool(path); // another gateway's view: the committed frames, with their ids
    assert.deepEqual(other.take(0, 10).map((f) => [f.id, ...columns(f)]),
      sent.slice(0, 2).map((f, i) => [i + 1, ...columns(f)]));
    other.close();
    clock.now = 250;
    assert.equal(spool.commit([], [[1, 3]]), 0); // 3 was still held: dropped; 1 and 2 deleted from the file
    assert.deepEqual(fileIds(spool), []);
    assert.equal(spool.depth, 0);
    spool.close();
  });

  it('commits the oldest held frames at once past 5,000', () => {
    const clock = { now: 0 };
    const spool = openDeferred(tmpPath(), clock);
    spool.commit(frames(5003), []);
    assert.equal(spool.flushDelayMs(), 0);
    clock.now = 1;
    assert.equal(spool.commit([], []), 3);
    assert.deepEqual(fileIds(spool), [1, 2, 3]);
    assert.equal(spool.heldFrames, 5000);
    assert.equal(spool.flushDelayMs(), 0); // the file holds frames: holding is not safe, the rest is due at once
    spool.close();
  });

  it('gives ids above every id the spool has given, after a reopen too', () => {
    const clock = { now: 0 };
    const path = tmpPath();
    const batch = new Spool(path);
    batch.commit(frames(10), []);
    batch.commit([], [[1, 10]]); // the table is empty; sqlite_sequence says 10
    batch.close();
    let spool = openDeferred(path, clock);
    spool.commit(frames(2), []);
    assert.deepEqual(ids(spool.take(0, 10)), [11, 12]);
    clock.now = 200;
    spool.commit([], []);
    spool.close();
    spool = openDeferred(path, clock);
    spool.commit(frames(1), []); // committed at once: the file holds frames
    assert.deepEqual(ids(spool.take(0, 10)), [11, 12, 13]);
    assert.deepEqual(fileIds(spool), [11, 12, 13]);
    spool.close();
  });

  it('stores receipt stamps as ceilings, and the real ones at a clean stop', () => {
    const clock = { now: 0, wall: 10_000 }; // stamps on time
    const path = tmpPath();
    let spool = openDeferred(path, clock);
    const transactions = watchTransactions(spool);
    spool.commit(frames(1), [], { G: 10_000 });
    assert.deepEqual(storedStamps(spool), { G: 10_000 + LEAD_MS });
    transactions.length = 0;
    spool.commit(frames(1, 1), [[1, 1]], { G: 9_000 + LEAD_MS }); // below the ceiling: nothing written
    assert.deepEqual(transactions, []);
    const past = 10_001 + LEAD_MS;
    clock.wall = past;
    spool.commit([], [[2, 2]], { G: past });
    assert.deepEqual(storedStamps(spool), { G: past + LEAD_MS });
    assert.equal(spool.commitHeld(), 0); // nothing held
    assert.deepEqual(storedStamps(spool), { G: past });
    spool.close();
    spool = openDeferred(path, clock); // the stored row is loaded: the next stamp above it writes a ceiling
    assert.deepEqual([...spool.lastReceiptStamps(1000)], [['G', past]]);
    clock.wall = past + 1;
    spool.commit(frames(1), [], { G: past + 1 });
    assert.deepEqual(storedStamps(spool), { G: past + 1 + LEAD_MS });
    spool.commitHeld();
    spool.close();
  });

  it('updates a receipt_stamps row in place: one page into the WAL per ceiling commit, not its index\'s too', () => {
    const clock = { now: 0, wall: 10_000 }; // stamps on time
    const path = tmpPath();
    const spool = openDeferred(path, clock);
    spool.commit([], [], { G: 10_000, H: 10_000 });
    const size = statSync(`${path}-wal`).size;
    clock.wall = 10_001 + LEAD_MS;
    spool.commit([], [], { G: 10_001 + LEAD_MS });
    assert.deepEqual(storedStamps(spool), { G: 10_001 + 2 * LEAD_MS, H: 10_000 + LEAD_MS });
    const pageSize = spool._store.db.pragma('page_size', { simple: true });
    assert.equal(statSync(`${path}-wal`).size - size, 24 + pageSize); // one WAL frame: its header and one page
    spool.close();
  });

  it('commits what is still held when it is closed', () => {
    const clock = { now: 0 };
    const path = tmpPath();
    const spool = openDeferred(path, clock);
    const sent = frames(2);
    spool.commit(sent, [], { G: 1_000 });
    spool.close();
    const reopened = new Spool(path);
    assert.equal(reopened.uncleanStop, false);
    assert.deepEqual(reopened.take(0, 10).map((f) => [f.id, ...columns(f)]),
      sent.map((f, i) => [i + 1, ...columns(f)]));
    assert.deepEqual([...reopened.lastReceiptStamps()], [['G', 1_000]]);
    reopened.close();
  });

  it('keeps held frames in memory while a commit finds no room, and takes no new ones', () => {
    const clock = { now: 0 };
    const spool = openDeferred(tmpPath(), clock);
    spool.commit(frames(500), []);
    assert.equal(spool.heldFrames, 500);
    // As a spool at its limit: SQLite refuses every new page.
    spool._store.db.pragma(`max_page_count = ${spool._store.db.pragma('page_count', { simple: true })}`);
    clock.now = 200; // the held frames are due
    assert.throws(() => spool.commit(frames(5, 10 ** 6), []),
      (error) => error instanceof SpoolFull && error.capReached);
    assert.deepEqual([spool.heldFrames, spool.depth, fileIds(spool)], [500, 500, []]);
    spool.liftCap();
    assert.equal(spool.commit([], []), 500);
    assert.deepEqual([spool.heldFrames, spool.depth], [0, 500]);
    spool.close();
  });

  it('checkpoints once 256 rows changed, or ten minutes after a change, not every second', () => {
    const clock = { now: 0 };
    const spool = openDeferred(tmpPath(), clock);
    assert.equal(spool.checkpointDue(), false);
    spool.commit(frames(1), [], { G: 10_000 }); // a ceiling: one row
    clock.now = CHECKPOINT_IDLE_MS - 1;
    assert.equal(spool.checkpointDue(), false);
    clock.now = CHECKPOINT_IDLE_MS;
    assert.equal(spool.checkpointDue(), true);
    spool.checkpoint();
    assert.equal(spool.checkpointDue(), false);
    clock.now += 1000;
    spool.commit([], []); // frame 1 due: one row
    spool.commit(frames(255, 1), []);
    clock.now += 1000;
    spool.commit([], []); // 255 more
    assert.equal(spool.checkpointDue(), true);
    spool.close();
    const batch = new Spool(tmpPath());
    assert.equal(batch.checkpointDue(), true); // batch and interval: every time
    batch.close();
  });

  it('says so when the last run left its WAL file (no clean close)', () => {
    const path = tmpPath();
    const crashed = openDeferred(path, { now: 0 }); // still open: as a killed process leaves it
    const next = openDeferred(path, { now: 0 });
    assert.equal(next.uncleanStop, true);
    const lines = [];
    setupLogging('info', { write: (text) => { lines.push(text); } });
    reportUncleanStop(next, 'deferred', 3);
    assert.equal(lines.length, 1);
    assert.match(lines[0], new RegExp(`level=WARNING event=unclean_stop_detected spool=${path} fsync=deferred `
      + "sources=3 action=\"the last run did not stop cleanly: frames it read in its last fsync_interval_ms that "
      + "Cassandra had not acknowledged may be missing; seq gaps from each source's last stored seq are counted in "
      + 'frames_possibly_lost"\n$'));
    crashed.close();
    next.close();
    const clean = openDeferred(path, { now: 0 });
    assert.equal(clean.uncleanStop, false);
    clean.close();
  });
});

async function counted(metric) {
  return (await metric.get()).values[0]?.value ?? 0;
}
const tick = () => new Promise((resolve) => { setImmediate(resolve); });
const CONFIG = { decode: { duplicate_window_s: 10, max_sources: 1000 }, time: { max_future_s: 60, max_age_days: 366 },
  spool: { when_full: 'pause' } };

describe('fsync "deferred": the ingest', () => {
  /** An ingest on a deferred spool; put(n) hands over a read of n frames. */
  function ingestOn(spool) {
    const metrics = createMetrics();
    const ingest = new Ingest(CONFIG, spool, metrics, () => {});
    const credits = new Credits(2);
    let seq = 0;
    const put = (n) => ingest.put({ receivedMs: Date.now(), credits,
      frames: Array.from({ length: n }, () => decodedFrame('v1', 'G', seq++, null, [['n', seq]])) });
    return { ingest, metrics, credits, put };
  }

  it('counts only the frames it commits, gives credits back at once, commits what is held at a stop', async () => {
    const clock = { now: 0 };
    const spool = openDeferred(tmpPath(), clock);
    const { ingest, metrics, credits, put } = ingestOn(spool);
    credits.take();
    put(2);
    await tick();
    await tick();
    assert.equal(credits.available, 2); // spooled at once: held
    assert.equal(spool.heldFrames, 2);
    ingest.acknowledge([1, 2]);
    await tick();
    assert.equal(spool.heldFrames, 0);
    put(1); // id 3, never acknowledged
    await tick();
    clock.now = 200;
    ingest.step(); // what the flush timer does once the frame is due
    assert.equal(await counted(metrics.spool_frames_committed), 1);
    assert.deepEqual(fileIds(spool), [3]);
    ingest.acknowledge([3, 3]); // the file is empty again: holding is safe
    await tick();
    put(1); // id 4, held at the stop
    await tick();
    assert.equal(spool.heldFrames, 1);
    await ingest.stop();
    assert.deepEqual(fileIds(spool), [4]);
    assert.equal(await counted(metrics.spool_frames_committed), 2);
    assert.equal(ingest.flush.armed, false);
    spool.close();
  });

  it('wakes itself when a held frame is due, and not while nothing is held', async () => {
    const spool = new Spool(tmpPath(), { fsync: 'deferred', holdMs: 10 }); // the real clock: only the order of events matters
    spool.setLink(true, true);
    const { ingest, put } = ingestOn(spool);
    put(1);
    await tick();
    assert.equal(ingest.flush.armed, true);
    const deadline = performance.now() + 5000;
    while (spool.heldFrames && performance.now() < deadline) {
      await new Promise((resolve) => { setTimeout(resolve, 5); });
    }
    assert.deepEqual(fileIds(spool), [1]);
    // Nothing held: what is left to wait for is the frame's seq row, written at most every ROWS_INTERVAL_MS.
    assert.ok(spool.flushDelayMs() === null || spool.flushDelayMs() > 1000, String(spool.flushDelayMs()));
    await ingest.stop();
    spool.close();
  });
});
