// Upgrading a spool (gateway/contract/spool.md, "Upgrading"): vectors/spool_upgrade.jsonl — a file as an older (or
// newer) format left it → the steps planned from what it says of itself, then the file as the gateway leaves it
// after opening it (or refusing it); and a step that fails leaves the old format whole.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';

import { FORMAT_VERSION, Spool, SpoolFormatError } from '../src/spool/index.js';
import { STEPS, tableColumns } from '../src/spool/schema.js';
import { upgradeSteps } from '../src/spool/upgrade-plan.js';
import { scratchPaths } from '../test-support/scratch.js';
import { contractVectors } from '../test-support/vectors.js';

const tmpPath = scratchPaths('spool-upgrade-');
const BIN = fileURLToPath(new URL('../bin/telemetry-gateway-node', import.meta.url));
const CASES = contractVectors('spool_upgrade.jsonl');

/** user_version, journal mode and tables (→ columns) of the file at path, read on a connection of its own. */
function fileState(path) {
  const db = new Database(path);
  try {
    return { user_version: db.pragma('user_version', { simple: true }),
      journal_mode: db.pragma('journal_mode', { simple: true }), tables: tableColumns(db) };
  } finally {
    db.close();
  }
}

function makeFile(path, sql) {
  const db = new Database(path);
  db.exec(sql);
  db.close();
}

describe('spool_upgrade.jsonl', () => {
  for (const c of CASES) {
    it(c.name, () => {
      assert.equal(c.params.format, FORMAT_VERSION);
      const path = tmpPath('spool.sqlite');
      if (c.file_sql !== null) makeFile(path, c.file_sql);
      const before = c.file_sql === null ? { user_version: 0, tables: new Map() } : fileState(path);
      const planned = upgradeSteps(before.user_version, before.tables, FORMAT_VERSION);
      if (c.expect.refused) {
        assert.equal(planned, null);
        assert.throws(() => new Spool(path), (error) => error instanceof SpoolFormatError
          && error.message.includes(`is spool format ${c.expect.user_version}; this gateway reads`));
      } else {
        assert.deepEqual(planned, c.expect.steps);
        new Spool(path).close();
      }
      const after = fileState(path);
      assert.deepEqual({ ...after, tables: Object.fromEntries(after.tables) },
        { user_version: c.expect.user_version, journal_mode: c.expect.journal_mode, tables: c.expect.tables });
    });
  }
});

describe('an upgrade that fails midway', () => {
  it('leaves the old format whole: the steps and the new user_version commit together', () => {
    const format3 = CASES.find((c) => c.name.startsWith('format 3'));
    const path = tmpPath('spool.sqlite');
    makeFile(path, `${format3.file_sql} INSERT INTO frames VALUES (7, 'G', 1000, 1001, 'n', x'3ff0000000000000');`);
    const before = fileState(path);
    const schema = STEPS.schema;
    STEPS.schema = () => { throw new Error('disk I/O error'); }; // after add_crc, before the commit
    try {
      assert.throws(() => new Spool(path), /disk I\/O error/);
    } finally {
      STEPS.schema = schema;
    }
    assert.equal(before.user_version, 3);
    assert.deepEqual(fileState(path), { ...before, journal_mode: 'wal' });
    const db = new Database(path);
    assert.deepEqual(db.prepare('SELECT * FROM frames').raw().all(),
      [[7, 'G', 1000, 1001, 'n', Buffer.from('3ff0000000000000', 'hex')]]);
    db.close();
  });
});

describe('a newer format', () => {
  it('run logs fatal, says it on stderr and exits 1, the file left as it was (spool.md, "A newer format")', () => {
    const path = tmpPath('newer.sqlite');
    makeFile(path, `PRAGMA user_version = ${FORMAT_VERSION + 1};`);
    const empty = tmpPath('empty.txt');
    writeFileSync(empty, '');
    const before = fileState(path);
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TELEMETRY_')));
    const done = spawnSync(process.execPath, [BIN, 'run', '--spool', path, '--input', empty, '--metrics-listen', ''],
      { env: { ...env, TELEMETRY_CASSANDRA_PORT: '1' }, encoding: 'utf8', timeout: 30_000 });
    const error = `${path} is spool format ${FORMAT_VERSION + 1}; this gateway reads up to ${FORMAT_VERSION}: `
      + 'upgrade the gateway or move the file away';
    assert.equal(done.status, 1, done.stderr);
    assert.ok(done.stderr.includes(`level=ERROR event=fatal error="${error}"`), done.stderr);
    assert.ok(done.stderr.endsWith(`telemetry-gateway-node: ${error}\n`), done.stderr);
    assert.deepEqual(fileState(path), before);
  });
});
