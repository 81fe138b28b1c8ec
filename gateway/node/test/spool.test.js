// The SQLite spool on a real file: commit, take, acknowledge, reopen, the size cap, the format. The file as the
// contract fixes it, written and read: spool-files.test.js. A really full disk: spool-full-disk.test.js.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import Database from 'better-sqlite3';

import { unpackValues } from '../src/reading-values.js';
import { FORMAT_VERSION, RESERVE_BYTES, Spool, SpoolFormatError, SpoolFull, newFrame } from '../src/spool/index.js';
import { SCHEMA_SQL, formatVersion } from '../src/spool/schema.js';
import { scratchPaths } from '../test-support/scratch.js';

const frames = (n, start = 0, source = 'G') => Array.from({ length: n }, (_, k) => {
  const i = start + k;
  return newFrame(source, 1_000 + i, 2_000 + i, [['temp_in', i + 0.5], ['light', i]]);
});
const valuesOf = (f) => unpackValues(f.metrics, f.vals);

const tmpPath = scratchPaths('spool-test-');

describe('spool', () => {
  it('commits, takes, acknowledges and reopens', () => {
    const path = tmpPath();
    const spool = new Spool(path);
    spool.commit(frames(5), []);
    const taken = spool.take(0, 3);
    assert.deepEqual(taken.map((f) => f.ts_ms), [1000, 1001, 1002]);
    assert.deepEqual(valuesOf(taken[0]), [['temp_in', 0.5], ['light', 0]]);
    assert.deepEqual(Object.keys(taken[0]), ['id', 'source', 'ts_ms', 'received_ms', 'metrics', 'vals']);
    assert.ok(Buffer.isBuffer(taken[0].vals));
    assert.deepEqual(spool.take(taken.at(-1).id, 10).map((f) => f.ts_ms), [1003, 1004]);
    spool.commit([], [[taken[0].id, taken.at(-1).id]]);
    assert.equal(spool.depth, 2);
    spool.close();

    const reopened = new Spool(path);
    assert.equal(reopened.depth, 2);
    assert.deepEqual(reopened.take(0, 10).map((f) => f.ts_ms), [1003, 1004]);
    reopened.close();
    const plain = new Database(path);
    assert.equal(plain.pragma('journal_mode', { simple: true }), 'wal');
    plain.close();
  });

  for (const count of [1, 7, 8, 41, 128, 169, 300]) {
    it(`stores a group of ${count} whole and takes it back in order`, () => {
      const spool = new Spool(tmpPath());
      spool.commit(frames(2), []);
      spool.commit(frames(count, 2, 'a-b_C9'), []);
      const taken = spool.take(0, count + 10);
      assert.equal(spool.depth, count + 2);
      assert.equal(taken.length, count + 2);
      assert.deepEqual(taken.map((f) => f.id), [...new Set(taken.map((f) => f.id))].sort((a, b) => a - b));
      assert.deepEqual(taken.map((f) => [f.source, f.ts_ms, f.received_ms, valuesOf(f)]),
        Array.from({ length: count + 2 }, (_, i) => [i < 2 ? 'G' : 'a-b_C9', 1_000 + i, 2_000 + i,
          [['temp_in', i + 0.5], ['light', i]]]));
      assert.deepEqual(spool.take(taken[count - 1].id, 2), taken.slice(count));
      assert.deepEqual(spool.take(taken.at(-1).id, 5), []);
      spool.close();
    });
  }

  it('gives ids that only grow, even after the spool emptied', () => {
    const spool = new Spool(tmpPath());
    spool.commit(frames(3), []);
    const last = spool.take(0, 10).at(-1).id;
    spool.commit([], [[0, last]]);
    spool.commit(frames(1, 3), []);
    assert.ok(spool.take(last, 10)[0].id > last);
    spool.close();
  });

  it('keeps its depth when an unknown id is acknowledged', () => {
    const spool = new Spool(tmpPath());
    spool.commit(frames(2), []);
    spool.commit([], [[999, 1005]]);
    assert.equal(spool.depth, 2);
    spool.close();
  });

  it('pauses reading at the cap; SQLite refuses only past the headroom', () => {
    const spool = new Spool(tmpPath(), { maxBytes: 64 * 1024 });
    assert.equal(spool.room(), null);
    for (let group = 0; spool.room() === null; group++) spool.commit(frames(50, group * 50), []);
    assert.equal(spool.room(), 'cap');
    assert.ok(spool.usedBytes() >= 64 * 1024);
    const atCap = spool.depth;
    spool.commit(frames(500, 10 ** 5), []); // what was read before the pause still fits: the headroom
    assert.equal(spool.depth, atCap + 500);
    assert.throws(() => {
      for (let i = 0; i < 1000; i++) spool.commit(frames(500, 2 * 10 ** 5 + i * 500), []);
    }, (error) => error instanceof SpoolFull && error.capReached === true);
    const depth = spool.depth;
    assert.ok(depth > 0);
    assert.equal(spool.take(0, 10 ** 6).length, depth); // the failed commit left nothing half-written
    assert.equal(spool.dropOldest(depth - 10), depth - 10);
    assert.equal(spool.room(), null); // freed pages count as room and are reused
    spool.commit(frames(50, 10 ** 6), []);
    assert.equal(spool.depth, 60);
    spool.close();
  });

  it('lets a shutdown keep what was read: liftCap', () => {
    const spool = new Spool(tmpPath(), { maxBytes: 64 * 1024 });
    assert.throws(() => {
      for (let i = 0; i < 1000; i++) spool.commit(frames(500, i * 500), []);
    }, SpoolFull);
    const depth = spool.depth;
    spool.liftCap();
    spool.commit(frames(500, 10 ** 6), []);
    assert.equal(spool.depth, depth + 500);
    spool.close();
  });

  it('keeps a reserve file of allocated blocks beside the spool', () => {
    const spool = new Spool(tmpPath());
    const stats = statSync(spool.reservePath);
    assert.equal(spool.reservePath, `${spool.path}.reserve`);
    assert.equal(stats.size, RESERVE_BYTES);
    assert.ok(stats.blocks * 512 >= RESERVE_BYTES); // allocated, not sparse
    assert.equal(spool.diskLow, false);
    assert.equal(spool.room(), null);
    spool.close();
  });

  it('sets the pragmas of spool.md on both connections', () => {
    for (const [fsync, synchronous] of [['batch', 1], ['interval', 1]]) { // batch: NORMAL + WalSync's fsync
      const spool = new Spool(tmpPath(), { fsync });
      for (const db of [spool._store.db, spool._store.reader]) {
        assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
        assert.equal(db.pragma('synchronous', { simple: true }), synchronous);
        assert.equal(db.pragma('busy_timeout', { simple: true }), 5000);
        assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 0);
        assert.equal(db.pragma('journal_size_limit', { simple: true }), 1 << 20);
      }
      assert.equal(spool._store.db.pragma('max_page_count', { simple: true }), (1 << 30) / 4096 + 1024);
      spool.close();
    }
  });

  it('keeps receipt stamps across a restart, the newest 1,000 sources', () => {
    const path = tmpPath();
    const spool = new Spool(path);
    spool.commit(frames(1), [], new Map([['G', 5049]]));
    spool.commit([], [], { H: 7000 });
    spool.close();
    const reopened = new Spool(path);
    assert.deepEqual(reopened.lastReceiptStamps(), new Map([['H', 7000], ['G', 5049]]));
    const many = new Map(Array.from({ length: 1005 }, (_, i) => [`s${i}`, 10_000 + i]));
    reopened.commit([], [], many);
    const kept = reopened.lastReceiptStamps();
    assert.equal(kept.size, 1000);
    assert.equal(kept.get('s1004'), 11_004);
    assert.equal(kept.has('s4'), false);
    assert.equal(kept.has('G'), false);
    assert.deepEqual(reopened.lastReceiptStamps(3), new Map([['s1004', 11_004], ['s1003', 11_003], ['s1002', 11_002]]));
    assert.equal(reopened._store.db.prepare('SELECT count(*) FROM receipt_stamps').pluck().get(), 3);
    reopened.close();
  });

  it('converts a format 1 spool in place', () => {
    const path = tmpPath('old.sqlite');
    const old = new Database(path);
    old.exec(`
      CREATE TABLE frames (id INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT NOT NULL, ts_ms INTEGER NOT NULL,
                           received_ms INTEGER NOT NULL, vals TEXT NOT NULL);
      CREATE TABLE receipt_stamps (source TEXT PRIMARY KEY, last_ts_ms INTEGER NOT NULL);
      INSERT INTO frames VALUES (7, 'G', 1000, 1001, '[["temp_in",21.5],["light",3]]');
      INSERT INTO receipt_stamps VALUES ('G', 1000);`);
    old.close();
    const spool = new Spool(path);
    assert.deepEqual(spool.take(0, 10).map((f) => [f.id, f.source, f.ts_ms, f.received_ms, valuesOf(f)]),
      [[7, 'G', 1000, 1001, [['temp_in', 21.5], ['light', 3]]]]);
    assert.deepEqual(spool.lastReceiptStamps(), new Map([['G', 1000]]));
    spool.close();
    const plain = new Database(path);
    assert.equal(plain.pragma('user_version', { simple: true }), FORMAT_VERSION);
    assert.deepEqual(plain.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'frames%'").pluck().all(),
      ['frames']);
    plain.close();
  });

  it('refuses a spool from a newer gateway', () => {
    const path = tmpPath('new.sqlite');
    const newer = new Database(path);
    newer.pragma(`user_version = ${FORMAT_VERSION + 1}`);
    newer.close();
    assert.throws(() => new Spool(path), (error) => error instanceof SpoolFormatError
      && error.message === `${path} is spool format ${FORMAT_VERSION + 1}; this gateway reads up to `
        + `${FORMAT_VERSION}: upgrade the gateway or move the file away`);
  });

  it('never checkpoints in a commit; checkpoint() copies the whole WAL', () => {
    // SQLite's automatic checkpoint would run inside the commit that crosses 1,000 WAL pages; here only
    // checkpoint() does, from its own connection.
    const path = tmpPath();
    const spool = new Spool(path);
    for (let group = 0; group < 300; group++) spool.commit(frames(100, group * 100), []);
    assert.ok(statSync(`${path}-wal`).size / 4096 > 1_000);
    const [inWal, copied] = spool.checkpoint();
    assert.ok(inWal > 1_000);
    assert.equal(copied, inWal);
    spool.commit(frames(1, 30_000), []); // a commit after a complete checkpoint starts the WAL over
    assert.ok(spool.checkpoint()[0] < 10);
    assert.equal(spool.depth, 30_001);
    spool.close();
  });
});

describe('spool schema', () => {
  const layout = (db) => [db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all(),
    db.pragma('user_version', { simple: true })];

  it('a new spool is exactly the contract\'s schema', () => {
    const path = tmpPath('gateway.sqlite');
    new Spool(path).close();
    const gateway = new Database(path);
    const plain = new Database(tmpPath('plain.sqlite'));
    plain.exec(SCHEMA_SQL);
    assert.deepEqual(layout(gateway), layout(plain));
    assert.equal(layout(plain)[1], FORMAT_VERSION);
    assert.ok(FORMAT_VERSION > 0);
    gateway.close();
    plain.close();
  });

  it('the format version is the script\'s user_version; an unfinished script is refused', () => {
    const script = "-- a comment; with a semicolon\nCREATE TABLE a (x TEXT DEFAULT ';');\nPRAGMA user_version = 7;\n";
    assert.equal(formatVersion(script), 7);
    assert.throws(() => formatVersion(`${script}CREATE TABLE b (y`), /incomplete input/);
  });
});

describe('fsync "batch"', () => {
  it('makes commits durable with an fsync of the WAL off the event loop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spool-sync-'));
    try {
      const spool = new Spool(join(dir, 'spool.sqlite'));
      spool.commit(frames(10), []);
      let durable = false;
      const synced = spool.whenDurable().then(() => { durable = true; });
      assert.equal(durable, false); // the fsync runs in the thread pool: the caller goes on meanwhile
      await synced;
      assert.equal(durable, true);
      await Promise.all([spool.whenDurable(), spool.whenDurable()]); // calls during an fsync share the next one
      spool.close();
      const interval = new Spool(join(dir, 'interval.sqlite'), { fsync: 'interval' });
      assert.equal(interval._policy._walSync, undefined); // no fsync after a commit: the checkpoint's
      await interval.whenDurable();
      interval.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

