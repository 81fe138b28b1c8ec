// A frame's values as the spool stores them: byte for byte what the Python gateway's reading_values.py packs
// (checked against it when the project's venv is there), and back.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { it } from 'node:test';

import { metricNames, packValues, unpackValues } from '../src/reading-values.js';
import { PYTHON, noPython } from '../test-support/python.js';

const NO_PYTHON = noPython('Python byte-identity not checked');

const MANY = Array.from({ length: 40 }, (_, i) => [`m${i}`, i * 1.25 - 7]);
// Inputs as Python literals and as JS values; Python's own bytes are what packValues must give.
const CASES = [
  ['(("temp_in", 5.5), ("light", 0.0))', [['temp_in', 5.5], ['light', 0]]],
  ['(("a", -0.0),)', [['a', -0]]],
  ['(("a", float("nan")), ("b", float("inf")), ("c", float("-inf")))', [['a', NaN], ['b', Infinity], ['c', -Infinity]]],
  ['(("big", 1.7976931348623157e308), ("tiny", 5e-324), ("small", 2.2250738585072014e-308))',
    [['big', Number.MAX_VALUE], ['tiny', Number.MIN_VALUE], ['small', 2.2250738585072014e-308]]],
  ['(("i", 12345678901234567), ("third", 1/3), ("neg", -273.15))',
    [['i', 12345678901234567], ['third', 1 / 3], ['neg', -273.15]]],
  [`(${MANY.map(([name, value]) => `("${name}", ${value})`).join(', ')},)`, MANY],
];

it('packs names joined by commas and big-endian doubles', () => {
  const { metrics, vals } = packValues([['temp_in', 5.5], ['light', 0]]);
  assert.equal(metrics, 'temp_in,light');
  assert.equal(vals.toString('hex'), '4016000000000000' + '0000000000000000');
  assert.equal(packValues([['a', -0]]).vals.toString('hex'), '8000000000000000');
});

it('unpacks what it packed, -0 and NaN included', () => {
  for (const [, values] of CASES) {
    const { metrics, vals } = packValues(values);
    const back = unpackValues(metrics, vals);
    assert.equal(back.length, values.length);
    back.forEach(([name, number], i) => {
      assert.equal(name, values[i][0]);
      assert.ok(Object.is(number, values[i][1]), `${name}: ${number} is not ${values[i][1]}`);
    });
  }
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

it('packs exactly the bytes Python packs, and reads Python\'s bytes back', { skip: NO_PYTHON }, () => {
  const script = 'import sys\nfrom telemetry_gateway.reading_values import pack_values\n'
    + `for values in (${CASES.map(([python]) => python).join(', ')},):\n`
    + '    names, data = pack_values(values)\n    print(names, data.hex())\n';
  const run = spawnSync(PYTHON, ['-c', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const lines = run.stdout.trim().split('\n');
  assert.equal(lines.length, CASES.length);
  CASES.forEach(([, values], i) => {
    const [names, hex] = lines[i].split(' ');
    const { metrics, vals } = packValues(values);
    assert.equal(metrics, names);
    assert.equal(vals.toString('hex'), hex, `case ${i}`);
    const back = unpackValues(names, Buffer.from(hex, 'hex'));
    back.forEach(([, number], j) => assert.ok(Object.is(number, values[j][1])));
  });
});
