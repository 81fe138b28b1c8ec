// The legacy JSON reader where JSON.parse and Python's json.loads differ (each expectation checked against the
// Python gateway's decode_line): duplicate names anywhere, which error comes first, -0 as an int literal.

import assert from 'node:assert/strict';
import { it } from 'node:test';

import { decodeLine } from '../src/frame-decoder.js';

const PREFIX = '{"source":"G","destination":"C",';
const decode = (text) => decodeLine(Buffer.from(text, 'latin1'));
const valuesOf = (text) => decode(PREFIX + text).values;

it('a name twice in a nested object is duplicate_key', () => {
  assert.equal(decode('{"x":{"a":1,"a":2},"y":1}').reason, 'duplicate_key');
  assert.equal(decode('{"a":[{"b":1,"b":1}],').reason, 'duplicate_key'); // the inner object closed first
});

it('names are compared decoded', () => {
  assert.equal(decode('{"a":1,"\\u0061":2}').reason, 'duplicate_key');
});

it('the first failure in the text decides', () => {
  assert.equal(decode('{"x":{"a":1,"a":2},"y":NaN}').reason, 'duplicate_key');
  assert.equal(decode('{"a":1,"a":NaN}').reason, 'bad_json');
  assert.equal(decode('{"a":1,"a":2} junk').reason, 'duplicate_key');
});

it('not JSON: trailing commas, leading zeros, bad escapes, raw control characters, -Infinity', () => {
  for (const member of ['"a":1,}', '"a":01}', '"a":"\\x"}', '"a":"\t"}', '"a":-Infinity}', '"a":[1,2,]}']) {
    assert.equal(decode(PREFIX + member).reason, 'bad_json', member);
  }
});

it('an int literal -0 is +0, a float -0 keeps its sign', () => {
  assert.ok(Object.is(valuesOf('"a":-0}')[0][1], 0));
  assert.ok(Object.is(valuesOf('"a":-0.0}')[0][1], -0));
  assert.ok(Object.is(valuesOf('"a":-0e0}')[0][1], -0));
});

it('JSON whitespace after the object, an underflow to 0, exponents', () => {
  assert.deepStrictEqual(valuesOf('"a":1}\r\r'), [['a', 1]]);
  assert.deepStrictEqual(valuesOf('"a":1e-400}'), [['a', 0]]);
  assert.deepStrictEqual(valuesOf('"a":true,"b":2.5E+3}'), [['b', 2500]]);
  assert.equal(decode(`${PREFIX}"a":1}\u000b`).reason, 'bad_json'); // \v is no JSON whitespace
});
