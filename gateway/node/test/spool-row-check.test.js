// Row checksums (gateway/contract/spool.md, "Row checksums"): the contract's vectors, every insert path storing one,
// a row failing its checksum never sent (deleted, reported once), the format 5 → 6 upgrade, the salvage.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { crc32 } from 'node:zlib';

import Database from 'better-sqlite3';

import { Spool, newFrame } from '../src/spool/index.js';
import { crcBytes, crcMatches, frameCrc } from '../src/spool/row-check.js';
import { salvage } from '../src/spool/salvage.js';
import { SCHEMA_SQL } from '../src/spool/schema.js';
import { scratchPaths } from '../test-support/scratch.js';

const tmpPath = scratchPaths('spool-row-check-test-');
const VECTORS = readFileSync(new URL('../../contract/vectors/frame_crc.jsonl', import.meta.url), 'utf8').trim()
  .split('\n').map((line) => JSON.parse(line));
const columns = (c) => [c.source, c.ts_ms, c.received_ms, c.metrics, Buffer.from(c.vals, 'hex')];
const frame = (n) => newFrame('A-1', 1000 * n, 1000 * n + 1, [['n', n], ['neg', -n]]);
const rawRows = (path) => {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT id, source, ts_ms, received_ms, metrics, vals, crc FROM frames ORDER BY id').raw().all();
  } finally {
    db.close();
  }
};
const vals = (...numbers) => {
  const buffer = Buffer.alloc(8 * numbers.length);
  numbers.forEach((number, i) => buffer.writeDoubleBE(number, 8 * i));
  return buffer;
};

describe('frame_crc.jsonl', () => {
  for (const c of VECTORS) {
    it(c.name, () => {
      if ('crc' in c) {
        assert.equal(crcBytes(...columns(c)).toString('hex'), c.bytes);
        assert.equal(frameCrc(...columns(c)), c.crc);
        assert.equal(crcMatches(c.crc, ...columns(c)), true);
      } else {
        assert.equal(crcMatches(c.stored_crc, ...columns(c)), c.matches);
      }
    });
  }
});

describe('row checksums', () => {
  it("are zlib's CRC-32 of the row's bytes, for text of any UTF-8 and times of any sign", () => {
    for (let i = 0; i < 2000; i++) {
      const source = ['A-1', `gréenhouse-${i}`, `n\u{1F600}${i}`, 'x'][i % 4];
      const metrics = ['t', 'temp_in,light'][i % 2];
      const values = Buffer.from(Array.from({ length: 8 * (i % 2 + 1) }, (_, j) => (i * 7 + j * 13) & 255));
      const tsMs = Math.floor((Math.random() - 0.25) * 2 ** 53);
      const receivedMs = Math.floor(Math.random() * 2 ** 53);
      assert.equal(frameCrc(source, tsMs, receivedMs, metrics, values),
        crc32(crcBytes(source, tsMs, receivedMs, metrics, values)) | 0);
    }
  });

  for (const fsync of ['batch', 'interval', 'deferred']) {
    it(`are stored for every row under fsync = ${fsync}`, () => {
      const path = tmpPath();
      const spool = new Spool(path, { fsync });
      spool.setLink(true, true);
      spool.commit(Array.from({ length: 300 }, (_, i) => frame(i + 1)), []);
      spool.close(); // deferred: commits what it holds
      const rows = rawRows(path);
      assert.equal(rows.length, 300);
      for (const row of rows) {
        assert.equal(row[6], frameCrc(...row.slice(1, 6)));
        assert.ok(row[6] >= -(2 ** 31) && row[6] < 2 ** 31);
      }
    });
  }

  it('a row failing its checksum is not sent, but deleted and reported once', () => {
    const path = tmpPath();
    const spool = new Spool(path);
    spool.commit(Array.from({ length: 10 }, (_, i) => frame(i + 1)), []);
    const db = new Database(path);
    const flipped = vals(4, -4);
    flipped[0] ^= 0x01; // one bit of the first value: the page's structure untouched
    db.prepare('UPDATE frames SET vals = ? WHERE ts_ms = 4000').run(flipped);
    db.exec('UPDATE frames SET ts_ms = 7001 WHERE ts_ms = 7000'); // a timestamp off by one
    db.close();
    const taken = spool.take(0, 100);
    assert.deepEqual(taken.map((f) => f.ts_ms), [1, 2, 3, 5, 6, 8, 9, 10].map((n) => 1000 * n));
    for (const f of taken) assert.deepEqual(f.vals, vals(f.ts_ms / 1000, -f.ts_ms / 1000));
    assert.deepEqual(spool.damagedRows().map((row) => [row.id, row.source, row.ts_ms]), [[4, 'A-1', 4000],
      [7, 'A-1', 7001]]);
    assert.deepEqual(spool.damagedRows(), []);
    assert.equal(spool._store.depth, 8);
    assert.equal(rawRows(path).length, 8); // deleted: the file can be emptied
    assert.deepEqual(spool.take(0, 100), taken);
    assert.deepEqual(spool.damagedRows(), []);
    spool.close();
  });

  it('a format 5 spool gets the column; its old rows are sent unchecked', () => {
    const path = tmpPath();
    const db = new Database(path);
    db.exec('BEGIN IMMEDIATE');
    db.exec('CREATE TABLE frames (id INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT NOT NULL, ts_ms INTEGER NOT NULL, '
      + 'received_ms INTEGER NOT NULL, metrics TEXT NOT NULL, vals BLOB NOT NULL)');
    db.exec(SCHEMA_SQL.replace('user_version = 6', 'user_version = 5')); // the other tables as format 5 had them
    db.prepare("INSERT INTO frames (source, ts_ms, received_ms, metrics, vals) VALUES ('A-1', 1000, 1001, 'n,neg', ?)")
      .run(vals(1, -1));
    db.exec('COMMIT');
    assert.ok(!db.pragma('table_info(frames)').some((column) => column.name === 'crc'));
    db.close();
    const spool = new Spool(path);
    spool.commit([frame(2)], []);
    assert.deepEqual(spool.take(0, 10).map((f) => [f.ts_ms, f.vals]), [[1000, vals(1, -1)], [2000, vals(2, -2)]]);
    spool.close();
    const rows = rawRows(path);
    assert.equal(rows[0][6], null);
    assert.equal(rows[1][6], frameCrc(...rows[1].slice(1, 6)));
    const check = new Database(path, { readonly: true });
    assert.equal(check.pragma('user_version', { simple: true }), 6);
    check.close();
  });

  it('the salvage keeps rows whose checksum matches or is NULL', () => {
    const path = tmpPath();
    const spool = new Spool(path);
    spool.commit(Array.from({ length: 5 }, (_, i) => frame(i + 1)), []);
    spool.close();
    const db = new Database(path);
    db.prepare('UPDATE frames SET vals = ? WHERE ts_ms = 2000').run(vals(2, 0)); // torn: zeros
    db.exec('UPDATE frames SET crc = NULL WHERE ts_ms = 3000');
    db.exec("UPDATE frames SET crc = 'x' WHERE ts_ms = 4000"); // a damaged cell of another type
    db.close();
    const rows = rawRows(path);
    const frames = salvage(path).tables.frames;
    assert.equal(frames.invalid, 2);
    assert.deepEqual(frames.rows.map((row) => [row[2], row[6]]), [[1000, rows[0][6]], [3000, null],
      [5000, rows[4][6]]]);
  });
});
