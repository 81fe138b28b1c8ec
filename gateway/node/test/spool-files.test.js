// A spool file as the contract fixes it (spool.sql, spool.md), so that either gateway reads what the other wrote:
// gateway/contract/vectors/spool_files.jsonl. Written here, the file read with plain SQL holds exactly the expected
// rows, stamps and last id, with spool.sql's tables, column types and format version; a file made from spool.sql and
// plain SQL with those rows is read here row for row, and new frames go on after its last id.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import Database from 'better-sqlite3';

import { Spool, newFrame } from '../src/spool/index.js';
import { scratchPaths } from '../test-support/scratch.js';
import { contractVectors } from '../test-support/vectors.js';

const SPOOL_SQL = readFileSync(new URL('../../contract/spool.sql', import.meta.url), 'utf8');
const TYPES = [['integer', 'text', 'integer', 'integer', 'text', 'blob', 'integer']];
const tmpPath = scratchPaths('spool-files-');

// "NaN", "Infinity", "-Infinity": the values JSON cannot hold (README, reading_values.jsonl).
const frameOf = ([source, tsMs, receivedMs, values]) => newFrame(source, tsMs, receivedMs,
  values.map(([name, value]) => [name, typeof value === 'string' ? Number(value) : value]));
const tables = (db) => db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").raw().all();

describe('spool_files.jsonl', () => {
  for (const c of contractVectors('spool_files.jsonl')) {
    it(`written: ${c.name}`, () => {
      const path = tmpPath();
      const spool = new Spool(path);
      for (const step of c.steps) {
        if ('commit' in step) {
          spool.commit(step.commit.frames.map(frameOf), [], new Map(Object.entries(step.commit.stamps)));
        } else {
          spool.commit([], [step.acknowledge]);
        }
      }
      spool.close();
      const reference = new Database(':memory:');
      reference.exec(SPOOL_SQL);
      const db = new Database(path, { readonly: true });
      try {
        const rows = db.prepare('SELECT id, source, ts_ms, received_ms, metrics, lower(hex(vals)), crc FROM frames '
          + 'ORDER BY id').raw().all();
        assert.deepStrictEqual(rows, c.expect.frames);
        assert.deepStrictEqual(db.prepare('SELECT source, last_ts_ms FROM receipt_stamps ORDER BY source').raw().all(),
          c.expect.receipt_stamps);
        assert.equal(db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'frames'").pluck().get(), c.expect.last_id);
        assert.deepStrictEqual(db.prepare('SELECT DISTINCT typeof(id), typeof(source), typeof(ts_ms), '
          + 'typeof(received_ms), typeof(metrics), typeof(vals), typeof(crc) FROM frames').raw().all(), TYPES);
        assert.deepStrictEqual(tables(db), tables(reference));
        assert.equal(db.pragma('user_version', { simple: true }), reference.pragma('user_version', { simple: true }));
      } finally {
        db.close();
        reference.close();
      }
    });

    it(`read: ${c.name}`, () => {
      const path = tmpPath();
      const db = new Database(path); // as another gateway would have left it: spool.sql, then the rows
      db.exec(SPOOL_SQL);
      db.transaction(() => {
        const insert = db.prepare('INSERT INTO frames (id, source, ts_ms, received_ms, metrics, vals, crc) '
          + 'VALUES (?, ?, ?, ?, ?, ?, ?)');
        for (const row of c.expect.frames) insert.run(...row.slice(0, 5), Buffer.from(row[5], 'hex'), row[6]);
        const stamp = db.prepare('INSERT INTO receipt_stamps (source, last_ts_ms) VALUES (?, ?)');
        for (const [source, ms] of c.expect.receipt_stamps) stamp.run(source, ms);
        db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'frames'").run(c.expect.last_id);
      })();
      db.close();
      const spool = new Spool(path);
      try {
        const taken = spool.take(0, 10 ** 6).map((f) => [f.id, f.source, f.ts_ms, f.received_ms, f.metrics,
          f.vals.toString('hex')]);
        assert.deepStrictEqual(taken, c.expect.frames.map((row) => row.slice(0, 6)));
        assert.equal(spool.depth, c.expect.frames.length);
        assert.deepStrictEqual([...spool.lastReceiptStamps()].sort(), c.expect.receipt_stamps);
        spool.commit([frameOf(['N', 1, 2, [['x', 1]]])], []);
        assert.deepStrictEqual(spool.take(c.expect.last_id, 10).map((f) => f.id), [c.expect.last_id + 1]);
      } finally {
        spool.close();
      }
    });
  }
});
