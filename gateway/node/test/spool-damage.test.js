// A damaged spool file (gateway/contract/spool.md, "A damaged spool"): found by the check, read past its damaged
// pages, rows checked, replaced by a new spool, the damaged file kept aside as it was.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';

import Database from 'better-sqlite3';

import { Spool } from '../src/spool/index.js';
import { asidePath, recoverIfDamaged } from '../src/spool/recovery.js';
import { check, header, salvage } from '../src/spool/salvage.js';
import { SCHEMA_SQL } from '../src/spool/schema.js';
import { scratchPaths } from '../test-support/scratch.js';

const PAGE = 4096;
const FRAMES = 600;
const tmpPath = scratchPaths('spool-damage-test-');

const vals = (...numbers) => {
  const buffer = Buffer.alloc(8 * numbers.length);
  numbers.forEach((number, i) => buffer.writeDoubleBE(number, 8 * i));
  return buffer;
};

/** A sound spool: per-source rows first, then frames (n: ts 1000 n, values n and -n), so its last pages are leaves
 * of the frames table. */
function writeSpool(path, frames = FRAMES, extraRows = []) {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('BEGIN IMMEDIATE');
  db.exec(SCHEMA_SQL);
  db.exec("INSERT INTO receipt_stamps VALUES ('A-1', 5000)");
  db.exec("INSERT INTO source_seqs VALUES ('A-1', 41, 5000)");
  db.exec("INSERT INTO source_counters (source, counter) VALUES ('SIG-1', 77)");
  const insert = db.prepare('INSERT INTO frames (source, ts_ms, received_ms, metrics, vals) VALUES (?, ?, ?, ?, ?)');
  for (let n = 1; n <= frames; n++) insert.run('A-1', 1000 * n, 1000 * n, 'n,neg', vals(n, -n));
  for (const row of extraRows) insert.run(row);
  db.exec('COMMIT');
  db.close(); // a clean close folds the WAL in
}

function framesOf(spool) {
  const found = new Map();
  for (const frame of spool.take(0, 1e6)) {
    const buffer = Buffer.from(frame.vals, 'hex');
    found.set(buffer.readDoubleBE(0), [frame.source, frame.ts_ms, frame.metrics, buffer.readDoubleBE(8)]);
  }
  return found;
}

describe('a damaged spool', () => {
  it('leaves a sound spool alone', () => {
    const path = tmpPath('spool.db');
    writeSpool(path);
    const before = readFileSync(path);
    assert.deepEqual(check(path), { ok: true, detail: 'ok' });
    assert.equal(recoverIfDamaged(path), null);
    assert.deepEqual(readFileSync(path), before);
    assert.equal(existsSync(`${path}-wal`), false); // a WAL left behind would read as a crash at the next start
    assert.equal(check(tmpPath('missing.db')).ok, true);
  });

  it('loses only the frames of a zeroed page, keeps the other tables, and keeps the file aside as it was', () => {
    const path = tmpPath('spool.db');
    writeSpool(path);
    const data = readFileSync(path);
    const pages = Math.floor(data.length / PAGE);
    data.fill(0, (pages - 3) * PAGE, (pages - 2) * PAGE); // a leaf of frames, near the end
    writeFileSync(path, data);
    const integrity = check(path);
    assert.equal(integrity.ok, false);
    assert.ok(integrity.detail);
    assert.deepEqual(readFileSync(path), data); // the check changes nothing

    const spool = new Spool(path, { fsync: 'batch' });
    let found;
    let counters;
    try {
      found = framesOf(spool);
      const reader = new Database(path, { readonly: true });
      counters = reader.prepare('SELECT source, counter FROM source_counters').all();
      reader.close();
    } finally {
      spool.close();
    }
    const { recovered } = spool;
    const lost = [];
    for (let n = 1; n <= FRAMES; n++) if (!found.has(n)) lost.push(n);
    assert.ok(lost.length > 0 && lost.length < 100, `${lost.length} lost`);
    assert.equal(lost.at(-1) - lost[0] + 1, lost.length, 'one page holds one run of frames');
    for (const [n, frame] of found) assert.deepEqual(frame, ['A-1', 1000 * n, 'n,neg', -n]);
    assert.deepEqual(counters, [{ source: 'SIG-1', counter: 77 }]);
    assert.equal(recovered.frames, found.size);
    assert.equal(recovered.framesInvalid, 0);
    assert.ok(recovered.framesSkippedIds >= lost.length);
    assert.equal(recovered.countersComplete, true);
    assert.equal(recovered.seqs, 1);
    assert.deepEqual(readFileSync(recovered.aside), data);
    assert.match(basename(recovered.aside), /^spool\.db\.damaged-\d{8}T\d{6}Z$/);
    assert.equal(check(path).ok, true);
  });

  it('reads a file with a garbage header through a new header', () => {
    const path = tmpPath('spool.db');
    writeSpool(path);
    const data = readFileSync(path);
    for (let i = 0; i < 100; i++) data[i] = 100 + i;
    writeFileSync(path, data);
    assert.equal(check(path).ok, false);
    const found = salvage(path);
    assert.equal(found.unreadable, '');
    assert.equal(found.tables.frames.rows.length, FRAMES);
    assert.equal(existsSync(`${path}.salvage`), false);
  });

  it("writes the header's fields as SQLite does", () => {
    const path = tmpPath('spool.db');
    writeSpool(path, 10);
    const file = readFileSync(path);
    const real = file.subarray(0, 100);
    const made = header(PAGE, Math.floor(file.length / PAGE));
    for (const [start, end] of [[0, 24], [28, 32], [44, 48], [56, 60]]) {
      assert.deepEqual(made.subarray(start, end), real.subarray(start, end), `${start}-${end}`);
    }
  });

  it('drops rows that cannot be intact', () => {
    const path = tmpPath('spool.db');
    const bad = [['A-1', 1, 1, 'n,neg', vals(0)], // one value for two names
      ['A-1', 1, 1, 'N', vals(0)], // not a metric name
      [Buffer.from([0xff, 0xfe]), 1, 1, 'n', vals(0)], // a source that is not text
      ['A-1', -5, 1, 'n', vals(0)], // a negative time
      ['A-1', 1, 1, 'n', '12345678']]; // values as text
    writeSpool(path, 3, bad);
    const { frames } = salvage(path).tables;
    assert.deepEqual(frames.rows.map((row) => row.slice(1, 4)), [1, 2, 3].map((n) => ['A-1', 1000 * n, 1000 * n]));
    assert.equal(frames.invalid, bad.length);
  });

  it('names the file aside by the UTC time', () => {
    assert.equal(basename(asidePath(join('/x', 'spool.db'), 1_795_811_400_900)), 'spool.db.damaged-20261127T203000Z');
  });

  it('keeps the key each counter was accepted under', () => {
    const path = tmpPath('spool.db');
    writeSpool(path, 5);
    const db = new Database(path);
    db.exec("UPDATE source_counters SET key_fingerprint = '0123456789abcdef'");
    db.exec("INSERT INTO source_counters VALUES ('SIG-2', 9, 'not a fingerprint')");
    db.close();
    const counters = salvage(path).tables.source_counters;
    assert.deepEqual(counters.rows, [['SIG-1', 77, '0123456789abcdef']]);
    assert.equal(counters.invalid, 1);
  });

  it('gives the counters of a format 4 spool no key', () => {
    const path = tmpPath('spool.db');
    const db = new Database(path);
    db.exec('CREATE TABLE source_counters (source TEXT PRIMARY KEY, counter INTEGER NOT NULL)');
    db.exec("INSERT INTO source_counters VALUES ('SIG-1', 77)");
    db.close();
    assert.deepEqual(salvage(path).tables.source_counters.rows, [['SIG-1', 77, '']]);
  });

  it('finishes a start that stopped between its renames', () => {
    const path = tmpPath('spool.db');
    writeSpool(`${path}.recovering`, 7); // built and closed; the damaged file already moved
    const spool = new Spool(path, { fsync: 'batch' });
    try {
      assert.equal(spool.recovered, null);
      assert.deepEqual([...framesOf(spool).keys()], [1, 2, 3, 4, 5, 6, 7]);
    } finally {
      spool.close();
    }
    assert.equal(existsSync(`${path}.recovering`), false);
  });
});
