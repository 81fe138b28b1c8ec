// A frame's values as the spool stores them (spool.md, the `vals` column): gateway/contract/vectors/
// reading_values.jsonl packed and unpacked bit for bit (-0 and NaN included), and the refusals.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { metricNames, packValues, unpackValues } from '../src/reading-values.js';
import { contractVectors } from '../test-support/vectors.js';

const VECTORS = contractVectors('reading_values.jsonl');
// "NaN", "Infinity", "-Infinity": the values JSON cannot hold (README, reading_values.jsonl).
const number = (value) => (typeof value === 'string' ? Number(value) : value);

describe('reading_values.jsonl', () => {
  for (const c of VECTORS) {
    it(c.name, () => {
      if ('unpack' in c) {
        assert.equal(c.expect, 'refused');
        assert.throws(() => unpackValues(c.unpack.metrics, Buffer.from(c.unpack.vals, 'hex')), RangeError);
        return;
      }
      const values = c.values.map(([name, value]) => [name, number(value)]);
      const { metrics, vals } = packValues(values);
      assert.deepEqual({ metrics, vals: vals.toString('hex') }, c.expect);
      const back = unpackValues(c.expect.metrics, Buffer.from(c.expect.vals, 'hex'));
      assert.deepStrictEqual(back, values); // Object.is per number: -0 is not 0, NaN is NaN
    });
  }
});

it('packs names joined by commas and big-endian doubles', () => {
  const { metrics, vals } = packValues([['temp_in', 5.5], ['light', 0]]);
  assert.equal(metrics, 'temp_in,light');
  assert.equal(vals.toString('hex'), '4016000000000000' + '0000000000000000');
  assert.equal(packValues([['a', -0]]).vals.toString('hex'), '8000000000000000');
});

it('refuses no values, a value that is not a number and bytes that do not fit the names', () => {
  assert.throws(() => packValues([]), RangeError);
  assert.throws(() => packValues([['a', '1']]), TypeError);
  assert.throws(() => unpackValues('a,b', Buffer.alloc(8)), RangeError);
  assert.throws(() => unpackValues('a', Buffer.alloc(9)), RangeError);
});

it('splits a metrics text once and shares the names', () => {
  assert.equal(metricNames('x,y'), metricNames('x,y'));
  assert.deepEqual(metricNames('x,y'), ['x', 'y']);
  assert.ok(Object.isFrozen(metricNames('x,y')));
});
