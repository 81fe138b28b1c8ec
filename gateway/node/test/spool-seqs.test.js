// Seqs across a restart (gateway/contract/spool.md, "Seqs across a restart"): source_seqs in spool format 3, written
// with the frames under batch and interval, only for safe frames under deferred; read at the next start, where a
// source's first frame is judged against its stored seq and, after an unclean stop, its gap counted and logged as
// frames possibly lost. The spool's clock is a number the tests move.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import Database from 'better-sqlite3';

import { frame as decodedFrame } from '../src/decoded.js';
import { FrameAcceptor } from '../src/frame-acceptor.js';
import { setupLogging } from '../src/logs.js';
import { createMetrics } from '../src/metrics.js';
import { LEAD_MS } from '../src/spool/receipt-ceilings.js';
import { ROWS_ALONE_MS, ROWS_INTERVAL_MS } from '../src/spool/safe-seqs.js';
import { FORMAT_VERSION, Spool, newFrame } from '../src/spool/index.js';
import { scratchPaths } from '../test-support/scratch.js';

const tmpPath = scratchPaths('spool-seqs-test-');

/** A frame of source with seq (null: none), stamped tsMs. */
const seqFrame = (source, seq, tsMs) => newFrame(source, tsMs, tsMs, [['n', seq ?? -1]], seq);
/** source_seqs as {source: [seq, ts_ms]}. */
const stored = (spool) => Object.fromEntries(spool._store.db.prepare('SELECT source, seq, ts_ms FROM source_seqs').raw()
  .all().map(([source, seq, tsMs]) => [source, [seq, tsMs]]));

describe('source_seqs with batch and interval', () => {
  it('each commit with frames stores the newest seq per source among them; frames without a seq change nothing', () => {
    for (const fsync of ['batch', 'interval']) {
      const path = tmpPath();
      const spool = new Spool(path, { fsync });
      spool.commit([seqFrame('G', 7, 100), seqFrame('H', 3, 101), seqFrame('G', 8, 102), seqFrame('G', 2, 103)], []);
      assert.deepEqual(stored(spool), { G: [2, 103], H: [3, 101] }); // by arrival, not the highest seq
      spool.commit([seqFrame('G', null, 200), seqFrame('csv', null, 201)], []);
      spool.commit([], [[1, 4]]);
      assert.deepEqual(stored(spool), { G: [2, 103], H: [3, 101] });
      spool.close();
      const reopened = new Spool(path);
      assert.deepEqual([...reopened.lastSourceSeqs(1)], [['G', [2, 103]]]); // the newest by ts_ms
      assert.deepEqual(stored(reopened), { G: [2, 103] }); // older rows pruned, as receipt stamps are
      reopened.close();
    }
  });

  it('upgrades a format 2 spool (no source_seqs) in place, keeping its frames', () => {
    const path = tmpPath();
    const old = new Database(path);
    old.exec(`
      CREATE TABLE frames (id INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT NOT NULL, ts_ms INTEGER NOT NULL,
                           received_ms INTEGER NOT NULL, metrics TEXT NOT NULL, vals BLOB NOT NULL);
      CREATE TABLE receipt_stamps (source TEXT PRIMARY KEY, last_ts_ms INTEGER NOT NULL);
      INSERT INTO frames VALUES (5, 'G', 1000, 1001, 'n', x'0000000000000840');
      PRAGMA user_version = 2;`);
    old.close();
    const spool = new Spool(path);
    assert.deepEqual(spool.take(0, 10).map((f) => [f.id, f.source]), [[5, 'G']]);
    assert.deepEqual(stored(spool), {});
    assert.equal(spool._store.db.pragma('user_version', { simple: true }), FORMAT_VERSION);
    assert.equal(FORMAT_VERSION, 6);
    spool.close();
  });
});

describe('source_seqs with deferred', () => {
  // Rows stored before the run: a source without one has its row written as soon as it is safe (the last test).
  const BEFORE = { G: [0, 1], H: [0, 1] };

  /** A deferred spool on clock.now, its wall clock at 0; known: the sources with a stored row (BEFORE). */
  function openDeferred(clock, known = ['G', 'H']) {
    const path = tmpPath();
    const first = new Spool(path);
    const insert = first._store.db.prepare('INSERT INTO source_seqs (source, seq, ts_ms) VALUES (?, ?, ?)');
    for (const source of known) insert.run(source, ...BEFORE[source]);
    first.close();
    const spool = new Spool(path, { fsync: 'deferred', holdMs: 200, clock: () => clock.now, wallClock: () => 0 });
    spool.setLink(true, true);
    return spool;
  }

  it('names a frame only once it and every frame before it are safe; riding with a commit made anyway once '
    + 'ROWS_INTERVAL_MS old, alone once ROWS_ALONE_MS old', () => {
    const clock = { now: 0 };
    const spool = openDeferred(clock);
    spool.commit([seqFrame('G', 1, 10), seqFrame('G', 2, 11), seqFrame('H', 7, 12)], []); // ids 1-3, held
    clock.now = 100;
    spool.commit([seqFrame('G', 3, 13)], []); // id 4, held
    clock.now = 150;
    spool.commit([], [[1, 3]]); // 1-3 acknowledged: their rows may be written, with no commit of their own yet
    assert.deepEqual(stored(spool), BEFORE);
    assert.equal(spool.flushDelayMs(), 150); // frame 4 is due first
    clock.now = 160;
    spool.commit([], [], { G: 10_000 }); // a receipt-stamp ceiling: a commit made anyway, before the interval
    assert.deepEqual(stored(spool), BEFORE);
    clock.now = 200;
    spool.commit([], [[4, 4]]); // nothing to commit: the rows wait
    assert.deepEqual(stored(spool), BEFORE);
    assert.equal(spool.flushDelayMs(), ROWS_ALONE_MS - 200);
    clock.now = ROWS_INTERVAL_MS; // old enough to ride, but no commit is made anyway: still waiting
    spool.commit([], []);
    assert.deepEqual(stored(spool), BEFORE);
    clock.now = ROWS_ALONE_MS; // a commit of their own
    assert.equal(spool.flushDelayMs(), 0);
    spool.commit([], []);
    assert.deepEqual(stored(spool), { G: [3, 13], H: [7, 12] });
    assert.equal(spool.flushDelayMs(), null);
    spool.commit([seqFrame('G', 4, 14)], []); // id 5, held
    clock.now += 100;
    spool.commit([], [[5, 5]]); // acknowledged: its row is writable
    clock.now = ROWS_ALONE_MS + ROWS_INTERVAL_MS - 1;
    spool.commit([], [], { G: 10_001 + LEAD_MS }); // a ceiling commit, the rows not old enough to ride
    assert.deepEqual(stored(spool), { G: [3, 13], H: [7, 12] });
    clock.now = ROWS_ALONE_MS + ROWS_INTERVAL_MS;
    spool.commit([], [], { G: 10_002 + 2 * LEAD_MS }); // the next one: they ride with it
    assert.deepEqual(stored(spool), { G: [4, 14], H: [7, 12] });
    spool.close();
  });

  it('writes the rows of committed frames no sooner than the interval, and every safe row at the stop', () => {
    const clock = { now: 0 };
    const spool = openDeferred(clock);
    spool.commit([seqFrame('G', 1, 10)], []); // id 1, held
    clock.now = 200;
    spool.commit([seqFrame('G', 2, 11)], []); // 1 is due: committed, its row waits for the interval; 2 held
    assert.deepEqual(stored(spool), BEFORE);
    assert.equal(spool.heldFrames, 1);
    spool.commit([seqFrame('G', 3, 12)], []); // the file holds a frame: 2 is due at once, 3 committed with it
    assert.deepEqual(stored(spool), BEFORE);
    assert.equal(spool.heldFrames, 0);
    spool.commit([], [[1, 3]]);
    spool.commit([seqFrame('H', 9, 20), seqFrame('H', null, 21)], []); // held again
    assert.equal(spool.heldFrames, 2);
    spool.commitHeld(); // the stop
    assert.deepEqual(stored(spool), { G: [3, 12], H: [9, 20] });
    spool.close();
  });

  it('writes the row of a source without a stored one as soon as its frame is safe, then waits the interval', () => {
    const clock = { now: 0 };
    const spool = openDeferred(clock, ['H']);
    spool.commit([seqFrame('G', 1, 10)], [], { G: 10_000 }); // id 1, held (and a ceiling commit)
    assert.deepEqual(stored(spool), { H: BEFORE.H }); // not safe yet
    clock.now = 50;
    spool.commit([], [[1, 1]]); // acknowledged: written at once, a commit of its own
    assert.deepEqual(stored(spool), { G: [1, 10], H: BEFORE.H });
    spool.commit([seqFrame('G', 2, 11)], []); // id 2, held
    clock.now = 100;
    spool.commit([], [[2, 2]]);
    assert.deepEqual(stored(spool), { G: [1, 10], H: BEFORE.H }); // G has its row now: the interval again
    assert.equal(spool.flushDelayMs(), ROWS_ALONE_MS - 50);
    spool.close();
  });
});

describe('the first frame after a restart', () => {
  const CONFIG = { decode: { duplicate_window_s: 10, max_sources: 1000 },
    time: { max_future_s: 60, max_age_days: 366 } };
  const frameOf = (source, seq) => decodedFrame('v1', source, seq, null, [['n', seq]]);
  async function counter(metric, source) {
    return (await metric.get()).values.find((v) => v.labels.source === source)?.value ?? 0;
  }

  it('after an unclean stop: the gap from the stored seq is counted and logged as possibly lost, once', async () => {
    const lines = [];
    setupLogging('info', { write: (text) => { lines.push(text); } });
    const metrics = createMetrics();
    const acceptor = new FrameAcceptor(CONFIG, metrics, new Map(), new Map([['G', [10, 1_780_000_000_000]],
      ['H', [5, 1_780_000_000_001]]]), true);
    acceptor.accept(frameOf('G', 15), 1_780_000_001_000);
    acceptor.accept(frameOf('G', 17), 1_780_000_001_100); // a later gap is the radio's
    acceptor.accept(frameOf('H', 6), 1_780_000_001_200); // in order: nothing lost
    assert.equal(await counter(metrics.frames_possibly_lost, 'G'), 4);
    assert.equal(await counter(metrics.seq_missing, 'G'), 5);
    assert.equal(await counter(metrics.frames_possibly_lost, 'H'), 0);
    const lost = lines.filter((line) => line.includes('event=frames_possibly_lost'));
    assert.equal(lost.length, 1);
    assert.ok(lost[0].endsWith(' level=WARNING event=frames_possibly_lost source=G missing=4 after_seq=10 '
      + 'after_ts=1780000000000 action="frames numbered after the last stored seq, read by the run that crashed and '
      + 'not yet in Cassandra, are lost; some of these may have been stored"\n'), lost[0]);
  });

  it('after a clean stop: the gap is an ordinary one', async () => {
    const metrics = createMetrics();
    const acceptor = new FrameAcceptor(CONFIG, metrics, new Map(), new Map([['G', [10, 1]]]), false);
    const row = acceptor.accept(frameOf('G', 15), 1_780_000_001_000);
    assert.equal(row.seq, 15); // the seq goes with the row, for source_seqs
    assert.equal(await counter(metrics.seq_missing, 'G'), 4);
    assert.equal(await counter(metrics.frames_possibly_lost, 'G'), 0);
  });
});
