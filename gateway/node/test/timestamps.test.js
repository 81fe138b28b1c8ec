// The Stamper's explicit-time window and receipt stamps, and the UTC day of a timestamp (the Python gateway's
// test_core_logic.py, "time"; the contract's cases are in contract-vectors.test.js).

import assert from 'node:assert/strict';
import { it } from 'node:test';

import cassandra from 'cassandra-driver';

import { DAY_MS, Stamper, utcDay, utcDayNumber } from '../src/timestamps.js';

const { LocalDate } = cassandra.types;
const NOW = 1_780_000_000_000;

it('an explicit time is used when plausible', () => {
  const stamper = new Stamper(60_000, 7 * DAY_MS);
  assert.deepEqual(stamper.stamp('L', NOW - 3 * DAY_MS, NOW), { ts_ms: NOW - 3 * DAY_MS, explicit_t_refused: false });
  assert.equal(stamper.stamp('L', NOW + 59_000, NOW).ts_ms, NOW + 59_000);
  assert.equal(stamper.stamp('L', NOW - 7 * DAY_MS, NOW).ts_ms, NOW - 7 * DAY_MS); // both ends included
  assert.equal(stamper.stamp('L', NOW + 60_000, NOW).ts_ms, NOW + 60_000);
  assert.deepEqual(Object.keys(stamper.takeChanged()), []); // accepted times are not receipt stamps
});

it('an implausible time falls back to receipt and says so', () => {
  const stamper = new Stamper(60_000, 7 * DAY_MS);
  assert.deepEqual(stamper.stamp('L', NOW + 61_000, NOW), { ts_ms: NOW, explicit_t_refused: true });
  assert.equal(stamper.stamp('L', NOW - 8 * DAY_MS, NOW + 5).ts_ms, NOW + 5);
  assert.deepEqual(stamper.stamp('L', 0, NOW + 6), { ts_ms: NOW + 6, explicit_t_refused: true }); // 0 is a t
});

it('no t (null or undefined) is receipt-stamped, not refused', () => {
  const stamper = new Stamper(60_000, DAY_MS);
  assert.deepEqual(stamper.stamp('G', null, NOW), { ts_ms: NOW, explicit_t_refused: false });
  assert.deepEqual(stamper.stamp('G', undefined, NOW), { ts_ms: NOW + 1, explicit_t_refused: false });
});

it('receipt times strictly increase per source', () => {
  const stamper = new Stamper(60_000, DAY_MS);
  const stamps = [0, 1, 2].map(() => stamper.stamp('G', null, NOW).ts_ms);
  assert.deepEqual(stamps, [NOW, NOW + 1, NOW + 2]);
  assert.equal(stamper.stamp('H', null, NOW).ts_ms, NOW); // per source
  assert.equal(stamper.stamp('G', null, NOW - 50).ts_ms, NOW + 3); // the clock stepped back: still increasing
});

it('a forgotten source keeps strictly increasing stamps', () => {
  const stamper = new Stamper(60_000, DAY_MS);
  const burst = Array.from({ length: 50 }, () => stamper.stamp('G', null, NOW).ts_ms); // 49 ms ahead of the clock
  stamper.forget('G'); // evicted (other sources were seen more recently)
  assert.deepEqual(stamper.sources(), []);
  assert.equal(stamper.stamp('G', null, NOW + 10).ts_ms, burst.at(-1) + 1);
  assert.equal(stamper.stamp('H', null, NOW + 10).ts_ms, burst.at(-1) + 1); // any unknown source: above the floor
  assert.equal(stamper.stamp('K', null, NOW + 100).ts_ms, NOW + 100); // the floor is in the past: no effect
});

it('forgetting an unknown source, or one older than the floor, leaves the floor', () => {
  const stamper = new Stamper(60_000, DAY_MS);
  stamper.stamp('G', null, NOW + 100);
  stamper.stamp('H', null, NOW);
  stamper.forget('G');
  stamper.forget('nobody');
  stamper.forget('H'); // NOW: below the floor NOW + 100
  assert.equal(stamper.stamp('K', null, NOW).ts_ms, NOW + 101);
});

it('loaded stamps are bounded to the newest', () => {
  const loaded = { a: NOW + 1, b: NOW + 5, c: NOW + 3, d: NOW + 4 };
  const stamper = new Stamper(60_000, DAY_MS, loaded, 2);
  assert.deepEqual(stamper.sources(), ['d', 'b']); // oldest stamp first
  // "a" and "c" were dropped: their next stamps are still above anything they had (the oldest kept stamp + 1).
  assert.equal(stamper.stamp('c', null, NOW).ts_ms, NOW + 5);
  assert.equal(stamper.stamp('b', null, NOW).ts_ms, NOW + 6);
  const unbounded = new Stamper(60_000, DAY_MS, loaded);
  assert.deepEqual(unbounded.sources(), ['a', 'c', 'd', 'b']);
  assert.equal(unbounded.stamp('x', null, NOW).ts_ms, NOW); // nothing forgotten: no floor
});

it('stamps load from a Map (as the spool gives them, newest first) like from an object', () => {
  const stamper = new Stamper(60_000, DAY_MS, new Map([['b', NOW + 5], ['d', NOW + 4], ['a', NOW + 1]]), 3);
  assert.deepEqual(stamper.sources(), ['a', 'd', 'b']);
  assert.equal(stamper.stamp('x', null, NOW).ts_ms, NOW + 2); // as many as the bound: the oldest kept is the floor
  const fewer = new Stamper(60_000, DAY_MS, new Map([['a', NOW + 1]]), 3);
  assert.equal(fewer.stamp('x', null, NOW).ts_ms, NOW); // fewer than the bound: every stamp was loaded
  assert.deepEqual(new Stamper(60_000, DAY_MS, null, 3).sources(), []);
});

it('takeChanged gives the receipt stamps given since the last call, any source name a plain key', () => {
  const stamper = new Stamper(60_000, DAY_MS);
  stamper.stamp('G', null, NOW);
  stamper.stamp('G', null, NOW);
  stamper.stamp('__proto__', null, NOW);
  stamper.stamp('H', NOW, NOW); // an accepted explicit t: not a receipt stamp
  const changed = stamper.takeChanged();
  assert.deepEqual(Object.entries(changed), [['G', NOW + 1], ['__proto__', NOW]]);
  assert.deepEqual(Object.entries(stamper.takeChanged()), []);
  stamper.stamp('G', null, NOW);
  assert.deepEqual(Object.entries(stamper.takeChanged()), [['G', NOW + 2]]);
});

it('the UTC day of a timestamp', () => {
  const iso = (ts) => String(utcDay(ts));
  assert.equal(iso(0), '1970-01-01');
  assert.equal(iso(DAY_MS - 1), '1970-01-01');
  assert.equal(iso(1_774_742_400_000), '2026-03-29');
  assert.equal(iso(-1), '1969-12-31');
  assert.ok(utcDay(0) instanceof LocalDate);
  assert.ok(utcDay(1_774_742_400_000).equals(new LocalDate(2026, 3, 29)));
  assert.equal(utcDayNumber(-1), -1);
  assert.equal(utcDayNumber(DAY_MS), 1);
});
