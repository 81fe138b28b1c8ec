// What may leave the spool, without Cassandra.

import assert from 'node:assert/strict';
import { it } from 'node:test';

import cassandra from 'cassandra-driver';

import { Chunk, KNOWN_DAYS_MAX, MarkWrite, WriteLedger } from '../src/write-ledger.js';

const { LocalDate } = cassandra.types;
const DAY = new LocalDate(2026, 11, 23);

const chunk = (first, last, days = [['G', DAY]]) => new Chunk(first, last, new Map(), 4 * (last - first + 1), days);

it('a chunk is acknowledged once its readings and source_days succeeded', () => {
  const ledger = new WriteLedger();
  const first = chunk(1, 10);
  const second = chunk(11, 20, [['G', DAY], ['H', DAY]]);
  ledger.expect(2, first);
  ledger.expect(1, second);
  ledger.expect(1); // a mark write: owned by no chunk
  assert.equal(ledger.outstanding, 4);
  assert.equal(ledger.idle, false);
  assert.equal(ledger.succeeded(first), null); // one of its two requests
  assert.equal(ledger.succeeded(new MarkWrite([['G', DAY]])), null);
  assert.equal(ledger.succeeded(second), second);
  assert.ok(ledger.isKnownDay('G', DAY) && ledger.isKnownDay('H', new LocalDate(2026, 11, 23)));
  assert.ok(!ledger.isKnownDay('G', new LocalDate(2026, 11, 24)) && !ledger.isKnownDay('K', DAY));
  assert.equal(ledger.succeeded(first), first);
  assert.equal(ledger.knownDays.size, 2);
  assert.equal(ledger.idle, true);
});

it('a request owned by nobody only counts down', () => {
  const ledger = new WriteLedger();
  ledger.expect(2);
  assert.equal(ledger.succeeded(null), null);
  assert.equal(ledger.succeeded(null), null);
  assert.equal(ledger.idle, true);
});

it('the known days are forgotten past their bound (junk sources cannot grow them)', () => {
  const ledger = new WriteLedger();
  const junk = chunk(1, 1, Array.from({ length: KNOWN_DAYS_MAX + 1 }, (_, i) => [`j${i}`, DAY]));
  ledger.expect(1, junk);
  ledger.succeeded(junk);
  assert.equal(ledger.knownDays.size, KNOWN_DAYS_MAX + 1); // cleared before adding, so one set may pass it
  const one = chunk(2, 2);
  ledger.expect(1, one);
  ledger.succeeded(one);
  assert.equal(ledger.knownDays.size, 1);
  assert.ok(ledger.isKnownDay('G', DAY) && !ledger.isKnownDay('j0', DAY));
});
