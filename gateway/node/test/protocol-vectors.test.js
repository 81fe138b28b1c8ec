// firmware/protocol/vectors, byte for byte: crc.json, decode.json, room_csv.json (and encode.json's lines, which
// must decode back to what was encoded). assert.deepStrictEqual compares numbers with Object.is, so the sign of
// zero is checked too.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { crc16CcittFalse, crcHex } from '../src/crc16.js';
import { decodeLine } from '../src/frame-decoder.js';
import { REJECT_REASONS } from '../src/contract-constants.js';
import { decodeCsvLine } from '../src/room-csv.js';
import { latin1, protocolVectors } from '../test-support/vectors.js';

describe('crc.json', () => {
  const doc = protocolVectors('crc.json');
  assert.ok(doc.cases.length > 0);
  for (const c of doc.cases) {
    it(c.name ?? c.input, () => {
      assert.equal(crcHex(crc16CcittFalse(Buffer.from(c.input, 'ascii'))), c.crc);
      assert.equal(crcHex(crc16CcittFalse(c.input)), c.crc); // the string form the decoder uses
    });
  }
});

describe('decode.json', () => {
  const doc = protocolVectors('decode.json');
  assert.ok(doc.cases.length > 0);
  for (const c of doc.cases) {
    it(c.name, () => {
      assert.deepStrictEqual({ ...decodeLine(latin1(c.line)) }, c.expect);
    });
  }
  it('covers every reject reason of the decoder', () => {
    const covered = new Set(doc.cases.filter((c) => c.expect.kind === 'reject').map((c) => c.expect.reason));
    assert.deepStrictEqual([...covered].sort(), [...REJECT_REASONS.decode].sort());
  });
});

describe('encode.json lines decode back', () => {
  const doc = protocolVectors('encode.json');
  for (const c of doc.cases) {
    it(c.name, () => {
      assert.deepStrictEqual(decodeLine(latin1(c.line)), {
        kind: 'frame', format: 'v1', source: c.source, seq: c.seq, t: c.t,
        values: c.values.map(([key, text]) => [key, Number(text)]),
      });
    });
  }
});

describe('room_csv.json', () => {
  const doc = protocolVectors('room_csv.json');
  assert.ok(doc.cases.length > 0);
  for (const c of doc.cases) {
    it(c.name, () => {
      const got = decodeCsvLine(latin1(c.line), doc.source, c.columns ?? doc.columns);
      assert.deepStrictEqual({ ...got }, c.expect);
    });
  }
  it('covers every CSV reject reason and too_long', () => {
    const covered = new Set(doc.cases.filter((c) => c.expect.kind === 'reject').map((c) => c.expect.reason));
    assert.deepStrictEqual([...covered].sort(), [...REJECT_REASONS.csv, 'too_long'].sort());
  });
});
