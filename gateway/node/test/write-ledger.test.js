// What may leave the spool, without Cassandra (the Python gateway's test_sender_parts.py).

import assert from 'node:assert/strict';
import { it } from 'node:test';

import cassandra from 'cassandra-driver';

import { Chunk, DayChanges, KNOWN_DAYS_MAX, WriteLedger } from '../src/write-ledger.js';

const { LocalDate } = cassandra.types;
const DAY = new LocalDate(2026, 11, 23);

const chunk = (first, last, days = [['G', DAY]]) => new Chunk(first, last, new Map(), 4 * (last - first + 1), days);

it('a chunk is acknowledged only after its readings and then its day_changes succeeded', () => {
  const ledger = new WriteLedger();
  const first = chunk(1, 10);
  const second = chunk(11, 20, [['G', DAY], ['H', DAY]]);
  ledger.expect(2, first);
  ledger.expect(1, second);
  assert.equal(ledger.outstanding, 3);
  assert.equal(ledger.idle, false);
  assert.deepEqual(ledger.succeeded(first), [null, []]); // one of its two requests
  assert.deepEqual(ledger.succeeded(second), [second, []]); // readings written, day_changes not yet
  assert.deepEqual(ledger.succeeded(first), [first, []]);
  assert.deepEqual(ledger.written, [second, first]);
  assert.equal(ledger.knownDays.size, 0);
  const changes = ledger.takeWritten();
  assert.ok(changes instanceof DayChanges);
  assert.deepEqual(changes.chunks, [second, first]);
  assert.deepEqual(ledger.written, []);
  ledger.expect(1);
  assert.equal(ledger.idle, false);
  const [written, acknowledged] = ledger.succeeded(changes);
  assert.equal(written, null);
  assert.equal(acknowledged[0], second);
  assert.equal(acknowledged[1], first);
  assert.ok(ledger.isKnownDay('G', DAY) && ledger.isKnownDay('H', new LocalDate(2026, 11, 23)));
  assert.ok(!ledger.isKnownDay('G', new LocalDate(2026, 11, 24)) && !ledger.isKnownDay('K', DAY));
  assert.equal(ledger.knownDays.size, 2);
  assert.equal(ledger.idle, true);
});

it('a request owned by nobody only counts down', () => {
  const ledger = new WriteLedger();
  ledger.expect(2);
  assert.deepEqual(ledger.succeeded(null), [null, []]);
  assert.deepEqual(ledger.succeeded(null), [null, []]);
  assert.equal(ledger.idle, true);
});

it('the known days are forgotten past their bound (junk sources cannot grow them)', () => {
  const ledger = new WriteLedger();
  const days = Array.from({ length: KNOWN_DAYS_MAX + 1 }, (_, i) => [`j${i}`, DAY]);
  ledger.expect(1);
  ledger.succeeded(new DayChanges([chunk(1, 1, days)]));
  assert.equal(ledger.knownDays.size, KNOWN_DAYS_MAX + 1); // cleared before adding, so one set may pass it
  ledger.expect(1);
  ledger.succeeded(new DayChanges([chunk(2, 2)]));
  assert.equal(ledger.knownDays.size, 1);
  assert.ok(ledger.isKnownDay('G', DAY) && !ledger.isKnownDay('j0', DAY));
});
