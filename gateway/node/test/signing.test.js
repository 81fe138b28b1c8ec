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
import { loadSigningPolicy } from '../src/signing-config.js';
import { signingPolicy, Verifier } from '../src/signing.js';
import { Spool, newFrame } from '../src/spool/index.js';
import { scratchPaths } from '../test-support/scratch.js';
import { contractVectors } from '../test-support/vectors.js';

describe('signing.jsonl', () => {
  for (const c of contractVectors('signing.jsonl')) {
    it(c.name, () => {
      const { params } = c;
      const keys = new Map(Object.entries(params.keys).map(([source, key]) => [source, Buffer.from(key, 'hex')]));
      const verifier = new Verifier(signingPolicy(keys, new Set(params.unsigned_allowed), params.must_sign),
        new Map(Object.entries(params.counters)));
      c.steps.forEach((step, number) => {
        const reason = verifier.verdict({ kind: 'frame', ...step.frame });
        assert.deepStrictEqual(reason === null ? 'accepted' : { reject: reason }, step.expect, `step ${number}`);
      });
      assert.deepStrictEqual(Object.fromEntries(verifier.counters), c.expect.counters);
    });
  }
});

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
    spool.commit([newFrame('node3', 1, 1, [['a', 1]])], [], null, new Map([['node3', 7]]));
    spool.commit([], [], null, new Map([['node3', 9]]));
    spool.close();
    const db = new Database(path, { readonly: true });
    assert.deepStrictEqual(db.prepare('SELECT source, counter FROM source_counters').raw().all(), [['node3', 9]]);
    assert.equal(db.prepare('SELECT count(*) FROM frames').pluck().get(), 1);
    db.close();
  });
});
