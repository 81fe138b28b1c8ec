// gateway/contract/vectors/signing.jsonl against the verifier (src/signing.js), and the keys file's rules
// (src/keys-file.js).

import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { KeysFileError, parseKeys, readKeys } from '../src/keys-file.js';
import { signingPolicy, Verifier } from '../src/signing.js';
import { contractVectors } from '../test-support/vectors.js';

describe('signing.jsonl', () => {
  for (const c of contractVectors('signing.jsonl')) {
    it(c.name, () => {
      const { params } = c;
      const keys = new Map(Object.entries(params.keys).map(([source, key]) => [source, Buffer.from(key, 'hex')]));
      const verifier = new Verifier(signingPolicy(keys, new Set(params.unsigned_allowed), params.require_signed),
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
