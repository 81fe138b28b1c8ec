// gateway/contract/vectors/signing.jsonl against the verifier (src/signing.js), and the keys file's rules
// (src/keys-file.js).

import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import Database from 'better-sqlite3';

import { ConfigError } from '../src/config-error.js';
import { Ingest } from '../src/ingest.js';
import { KeysFileError, parseKeys, readKeys } from '../src/keys-file.js';
import { createMetrics } from '../src/metrics.js';
import { keyState, resetVerdict } from '../src/counters-command.js';
import { setupLogging } from '../src/logs.js';
import { loadSigningPolicy } from '../src/signing-config.js';
import { keyFingerprint, signingPolicy, Verifier } from '../src/signing.js';
import { Spool, newFrame } from '../src/spool/index.js';
import { FORMAT_VERSION } from '../src/spool/schema.js';
import { scratchPaths } from '../test-support/scratch.js';
import { contractVectors } from '../test-support/vectors.js';

describe('signing.jsonl', () => {
  for (const c of contractVectors('signing.jsonl')) {
    it(c.name, () => {
      const { params } = c;
      const keys = new Map(Object.entries(params.keys).map(([source, key]) => [source, Buffer.from(key, 'hex')]));
      const stored = params.fingerprints ?? {};
      const verifier = new Verifier(signingPolicy(keys, new Set(params.unsigned_allowed), params.must_sign),
        new Map(Object.entries(params.counters)), new Map(Object.entries(stored)));
      c.steps.forEach((step, number) => {
        const reason = verifier.verdict({ kind: 'frame', ...step.frame }, step.trusted === true);
        assert.deepStrictEqual(reason === null ? 'accepted' : { reject: reason }, step.expect, `step ${number}`);
      });
      assert.deepStrictEqual(Object.fromEntries(verifier.counters), c.expect.counters);
      if (c.expect.rekeyed) assert.deepStrictEqual(verifier.rekeyed.map(([source]) => source), c.expect.rekeyed);
      if (c.expect.fingerprints) { // the rows once the changed counters are committed
        const rows = Object.fromEntries(Object.keys(params.counters).map((source) => [source, stored[source] ?? '']));
        for (const [source, [, fingerprint]] of verifier.takeChanged()) rows[source] = fingerprint;
        assert.deepStrictEqual(rows, c.expect.fingerprints);
      }
    });
  }

  it('a fingerprint is of the key, never the key', () => {
    assert.equal(keyFingerprint(Buffer.from(KEY3_HEX, 'hex')), '0ab3b852713a2854');
    assert.notEqual(keyFingerprint(Buffer.alloc(16)), keyFingerprint(Buffer.from(KEY3_HEX, 'hex')));
  });
});
const KEY3_HEX = '000102030405060708090a0b0c0d0e0f';

describe('keys file', () => {
  const malformed = [
    ['node3 000102030405060708090a0b0c0d0e0f\nnode3 000102030405060708090A0B0C0D0E0F\n',
      'line 2: source node3 has a key on an earlier line'],
    ['node3 000102030405060708090a0b0c0d0e\n', 'line 1: not `<source> <32 hex digits>`'],
    ['# keys\n\nnode 3 000102030405060708090a0b0c0d0e0f\n', 'line 3: not `<source> <32 hex digits>`'],
    ['node3 000102030405060708090a0b0c0d0e0f extra\n', 'line 1: not `<source> <32 hex digits>`'],
    ['node\u00e9 000102030405060708090a0b0c0d0e0f\n', 'line 1: not `<source> <32 hex digits>`'],
  ];
  for (const [text, message] of malformed) {
    it(`refuses: ${message}`, () => {
      assert.throws(() => parseKeys(text), (error) => error instanceof KeysFileError && error.message === message);
    });
  }

  it('skips comments and blank lines; hex in either case', () => {
    const keys = parseKeys('  # c\n\n\tnode1\t8F1C2D3E4A5B6C7D8E9FA0B1C2D3E4F5  \nG 00112233445566778899aabbccddeeff');
    assert.deepStrictEqual([...keys.keys()], ['node1', 'G']);
    assert.equal(keys.get('node1').toString('hex'), '8f1c2d3e4a5b6c7d8e9fa0b1c2d3e4f5');
  });

  it('refuses a file the group or others may read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    try {
      const path = join(dir, 'keys');
      writeFileSync(path, 'node3 000102030405060708090a0b0c0d0e0f\n');
      chmodSync(path, 0o600);
      assert.equal(readKeys(path).get('node3').toString('hex'), '000102030405060708090a0b0c0d0e0f');
      for (const mode of [0o640, 0o604, 0o660]) {
        chmodSync(path, mode);
        const message = `mode 0${mode.toString(8)}: group or others may use it; chmod 600 it`;
        assert.throws(() => readKeys(path), { message });
      }
      assert.throws(() => readKeys(join(dir, 'absent')), { message: 'No such file or directory' });
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});

// --- the shell: keys from the config, verification in the ingest, counters in the spool -------------------------
const KEY3 = '000102030405060708090a0b0c0d0e0f';
const tmpPath = scratchPaths('signing-');
const CONFIG = { decode: { duplicate_window_s: 10, max_sources: 1000 }, time: { max_future_s: 60, max_age_days: 366 },
  spool: { when_full: 'pause' } };

function withKeys(text = `node3 ${KEY3}\n`, mode = 0o600, signing = {}) {
  const path = tmpPath('keys');
  writeFileSync(path, text);
  chmodSync(path, mode);
  return { ...CONFIG, signing: { keys_file: path, keys_credential: '', must_sign: 'keyed', unsigned_allowed: [],
    ...signing } };
}

describe('[signing] keys', () => {
  const unusable = [
    [`node3 ${KEY3}\n`, 0o644, 'unreadable', 'mode 0644: group or others may use it'],
    [`node3 ${KEY3.slice(1)}\n`, 0o600, 'syntax', 'line 1: not `<source> <32 hex digits>`'],
    [`node3 ${KEY3}\nnode3 ${KEY3}\n`, 0o400, 'distinct', 'line 2: source node3 has a key on an earlier line'],
  ];
  for (const [text, mode, rule, says] of unusable) {
    it(`an unusable keys file is a config error without the key: ${rule}`, () => {
      assert.throws(() => loadSigningPolicy(withKeys(text, mode)), (error) => error instanceof ConfigError
        && error.key === 'signing.keys_file' && error.rule === rule && error.message.includes(says)
        && !error.message.includes(KEY3.slice(0, 8)));
    });
  }

  it('reads a systemd credential', () => {
    const config = withKeys();
    const folder = config.signing.keys_file.replace(/\/keys$/, '');
    const signing = { ...config.signing, keys_file: '', keys_credential: 'keys', must_sign: 'all' };
    const policy = loadSigningPolicy({ ...config, signing }, { CREDENTIALS_DIRECTORY: folder });
    assert.deepStrictEqual([...policy.keys.keys()], ['node3']);
    assert.equal(policy.signsOnly('G'), true);
    assert.throws(() => loadSigningPolicy({ ...config, signing }, {}),
      { message: /at signing.keys_credential \[unreadable\]: CREDENTIALS_DIRECTORY/ });
  });
});

describe('verification in the ingest', () => {
  const good = { kind: 'frame', ...contractVectors('signing.jsonl')[0].steps[0].frame }; // node3, counter 1000
  const rejects = async (metrics) => Object.fromEntries((await metrics.rejects.get()).values
    .map(({ labels, value }) => [labels.reason, value]));

  it('counts rejects by reason; the counters survive a restart', async () => {
    const config = withKeys();
    const path = tmpPath();
    let spool = new Spool(path, { fsync: 'batch' });
    const metrics = createMetrics();
    let ingest = new Ingest(config, spool, metrics, () => {});
    const accept = (frame, ms) => ingest.acceptor.accept(frame, ms);
    assert.equal(accept({ ...good, tag: '000000000000' }, 1000), null);
    assert.equal(accept({ kind: 'frame', format: 'v1', source: 'node3', seq: 1, t: null, values: [['a', 1]] }, 1000),
      null);
    const row = accept(good, 1000);
    assert.equal(row.metrics, 'temp_in,vbat');
    assert.equal(accept(good, 1001), null);
    assert.ok(ingest.commit([row], [], {}, false));
    assert.deepStrictEqual(await rejects(metrics), { bad_mac: 1, unsigned: 1, replay: 1 });
    spool.close();
    spool = new Spool(path, { fsync: 'batch' });
    assert.deepStrictEqual(spool.lastCounters(), new Map([['node3', 1000]]));
    ingest = new Ingest(config, spool, createMetrics(), () => {});
    assert.equal(ingest.acceptor.accept({ ...good, seq: 0 }, 2000), null); // a replay after the restart
    spool.close();
  });

  it('stores counters in the transaction of their frames, or alone', () => {
    const path = tmpPath();
    const spool = new Spool(path, { fsync: 'batch' });
    spool.commit([newFrame('node3', 1, 1, [['a', 1]])], [], null, new Map([['node3', [7, '0ab3b852713a2854']]]));
    spool.commit([], [], null, new Map([['node3', [9, '0ab3b852713a2854']]]));
    spool.close();
    const db = new Database(path, { readonly: true });
    assert.deepStrictEqual(db.prepare('SELECT source, counter, key_fingerprint FROM source_counters').raw().all(),
      [['node3', 9, '0ab3b852713a2854']]);
    assert.equal(db.prepare('SELECT count(*) FROM frames').pluck().get(), 1);
    db.close();
  });

  it('upgrades a format 4 spool in one step; its counters are bound to the key at the next start', () => {
    const path = tmpPath();
    const old = new Database(path);
    old.exec(`CREATE TABLE frames (id INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT NOT NULL, ts_ms INTEGER NOT NULL,
        received_ms INTEGER NOT NULL, metrics TEXT NOT NULL, vals BLOB NOT NULL);
      CREATE TABLE receipt_stamps (source TEXT PRIMARY KEY, last_ts_ms INTEGER NOT NULL);
      CREATE TABLE source_seqs (source TEXT PRIMARY KEY, seq INTEGER NOT NULL, ts_ms INTEGER NOT NULL);
      CREATE TABLE source_counters (source TEXT PRIMARY KEY, counter INTEGER NOT NULL);
      INSERT INTO source_counters VALUES ('node3', 1000), ('node9', 5);
      PRAGMA user_version = 4;`);
    old.close();
    const spool = new Spool(path, { fsync: 'batch' });
    assert.deepStrictEqual(spool.lastCounterKeys(), new Map([['node3', ''], ['node9', '']]));
    const ingest = new Ingest(withKeys(), spool, createMetrics(), () => {});
    assert.equal(ingest.acceptor.accept(good, 1), null); // counter 1000 again: a replay under the unchanged key
    assert.ok(ingest.commit([], [], {}, false) !== undefined);
    spool.close();
    const db = new Database(path, { readonly: true });
    assert.equal(db.pragma('user_version', { simple: true }), FORMAT_VERSION); // and every later format's step
    assert.deepStrictEqual(db.prepare('SELECT * FROM source_counters ORDER BY source').raw().all(),
      [['node3', 1000, '0ab3b852713a2854'], ['node9', 5, '']]);
    db.close();
  });

  it('a changed key starts the counter afresh and says so once', () => {
    const lines = [];
    setupLogging('info', { write: (text) => { lines.push(text); } });
    try {
      const spool = new Spool(tmpPath(), { fsync: 'batch' });
      new Ingest(withKeys(), spool, createMetrics(), () => {});
      assert.equal(lines.filter((line) => line.includes('event=signing_counters_empty keys=1 ')).length, 1);
      spool.commit([], [], null, new Map([['node3', [5000, '00112233445566aa']]])); // a counter of an older key
      lines.length = 0;
      const ingest = new Ingest(withKeys(), spool, createMetrics(), () => {});
      assert.equal(lines.filter((line) => line.includes('event=signing_counter_rekeyed source=node3 counter=5000 '))
        .length, 1, lines.join(''));
      assert.ok(!lines.some((line) => line.includes('signing_counters_empty')));
      assert.notEqual(ingest.acceptor.accept(good, 1), null); // counter 1000 < 5000, but under the new key
      ingest.commit([], [], {}, false);
      assert.deepStrictEqual(spool.lastCounters(), new Map([['node3', 1000]]));
      assert.deepStrictEqual(spool.lastCounterKeys(), new Map([['node3', '0ab3b852713a2854']]));
      spool.close();
    } finally {
      setupLogging('info');
    }
  });
});

describe('the counters command', () => {
  it('resets only a counter of another key (or of a source without a key now)', () => {
    const keys = new Map([['node3', Buffer.from(KEY3_HEX, 'hex')]]);
    assert.equal(keyState('node3', '0ab3b852713a2854', keys), 'current');
    assert.equal(keyState('node3', '00112233445566aa', keys), 'other');
    assert.equal(keyState('node3', '', keys), 'unbound');
    assert.equal(keyState('node9', '0ab3b852713a2854', keys), 'none');
    assert.deepStrictEqual(['current', 'unbound', 'other', 'none'].map((state) => resetVerdict('node3', 7, state)[0]),
      [false, false, true, true]);
    assert.match(resetVerdict('node3', 7, 'current')[1], /Re-key the node.*above 7/);
  });
});
