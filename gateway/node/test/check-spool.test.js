// `check` on the spool file (gateway/contract/process.md, "check"), on real files: a sound spool, one with bits
// flipped inside values on the disk (SQLite's quick check passes, the rows' checksums fail), one of a newer format,
// one older than checksums, one damaged. The file is never changed; what check counts is what a send read leaves out.

import assert from 'node:assert/strict';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';

import Database from 'better-sqlite3';

import { spoolFindings } from '../src/check-command.js';
import { audit } from '../src/spool/audit.js';
import { Spool, newFrame } from '../src/spool/index.js';
import { FORMAT_VERSION, SCHEMA_SQL } from '../src/spool/schema.js';
import { scratchPaths } from '../test-support/scratch.js';

const tmpPath = scratchPaths('check-spool-test-');
const frame = (n) => newFrame('A-1', 1000 * n, 1000 * n + 1, [['n', 1000.25 + n], ['neg', -n]]);

function written(path, count) {
  const spool = new Spool(path);
  spool.commit(Array.from({ length: count }, (_, i) => frame(i + 1)), []);
  spool.close();
}

/** Every file of the spool's folder, name → bytes. */
function files(path) {
  const folder = dirname(path);
  return Object.fromEntries(readdirSync(folder).sort().map((name) => [name, readFileSync(join(folder, name))]));
}

/** One bit flipped in the file, inside the first value of each of these frames (its bytes occur once). */
function flipValueBits(path, numbers) {
  const data = readFileSync(path);
  for (const n of numbers) {
    const value = Buffer.alloc(8);
    value.writeDoubleBE(1000.25 + n);
    const at = data.indexOf(value);
    assert.ok(at >= 0 && data.indexOf(value, at + 1) < 0);
    data[at + 7] ^= 0x10;
  }
  writeFileSync(path, data);
}

const findings = (path) => spoolFindings(path, audit(path));

describe('check on the spool file', () => {
  it('a sound spool is ok, with its frame count', () => {
    const path = tmpPath();
    written(path, 40);
    const before = files(path);
    assert.deepEqual(findings(path), ['ok, 40 frames', null]);
    assert.deepEqual(files(path), before);
  });

  it('bits flipped in values fail their checksums: counted, the file unchanged, a send read leaves them out', () => {
    const path = tmpPath();
    written(path, 5000); // rows on many pages: the reads go in batches
    flipValueBits(path, [3, 1777, 4999]);
    const before = files(path);
    const copy = tmpPath(); // in a folder of its own: the -wal, -shm SQLite makes for it stay there
    copyFileSync(path, copy);
    const sqlite = new Database(copy, { readonly: true });
    assert.deepEqual(sqlite.pragma('quick_check'), [{ quick_check: 'ok' }]); // SQLite sees nothing
    sqlite.close();
    assert.deepEqual(findings(path), ['CHECKSUM FAILING in 3 of 5000 frames', `spool ${path} holds 3 frame(s) whose `
      + 'checksum fails: they are never sent; the gateway deletes them as it reaches them and counts them in '
      + 'telemetry_gateway_spool_invalid_frames_total']);
    assert.deepEqual(files(path), before); // read-only
    const spool = new Spool(path);
    assert.equal(spool.take(0, 10000).length, 4997);
    assert.deepEqual(spool.damagedRows().map((row) => row.ts_ms), [3000, 1777000, 4999000]);
    spool.close();
  });

  it('a newer format is reported and left as it is', () => {
    const path = tmpPath();
    written(path, 3);
    const db = new Database(path);
    db.pragma(`user_version = ${FORMAT_VERSION + 1}`);
    db.close();
    const before = files(path);
    const newer = FORMAT_VERSION + 1;
    assert.deepEqual(findings(path), [`NEWER FORMAT ${newer} (this gateway reads up to ${FORMAT_VERSION})`,
      `spool ${path} is of format ${newer}, newer than this gateway reads (${FORMAT_VERSION}): run the newer gateway, `
      + 'or move the file aside']);
    assert.deepEqual(files(path), before);
  });

  it('a spool older than checksums is counted, unchecked', () => {
    const path = tmpPath();
    const db = new Database(path);
    db.exec('CREATE TABLE frames (id INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT NOT NULL, ts_ms INTEGER NOT NULL, '
      + 'received_ms INTEGER NOT NULL, metrics TEXT NOT NULL, vals BLOB NOT NULL)');
    db.exec(SCHEMA_SQL.replace('user_version = 6', 'user_version = 5')); // the other tables as format 5 had them
    db.prepare("INSERT INTO frames (source, ts_ms, received_ms, metrics, vals) VALUES ('A-1', 1000, 1001, 'n', ?)")
      .run(Buffer.alloc(8));
    db.close();
    const found = audit(path);
    assert.deepEqual({ ...found, integrity: found.integrity.ok }, { integrity: true, version: 5, newer: false,
      frames: 1, failing: 0 });
    assert.deepEqual(spoolFindings(path, found), ['ok, 1 frames', null]);
  });

  it('a damaged spool is damaged first', () => {
    const path = tmpPath();
    written(path, 2000);
    const data = readFileSync(path);
    data.fill(0, 4096 * 3, 4096 * 4); // a zeroed page
    writeFileSync(path, data);
    const [line, problem] = findings(path);
    assert.equal(line, 'DAMAGED');
    assert.ok(problem.startsWith(`spool ${path} is damaged (`), problem);
  });
});
