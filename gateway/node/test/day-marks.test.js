// Day marks (gateway/contract/day-marks.md), without Cassandra: DayMarks'
// freshness and bounds, and the sender sending a day's mark before its readings, stamping each attempt, and marking
// again before a retry once the mark went stale. (The contract's cases: vectors/day_marks.jsonl, driven by
// contract-vectors.test.js.)

import assert from 'node:assert/strict';
import { afterEach, beforeEach, it, mock } from 'node:test';

import cassandra from 'cassandra-driver';

import { DayMarks, HOUR_MS, MARK_FRESH_MS, markInstant } from '../src/day-marks.js';
import { setupLogging } from '../src/logs.js';
import { createMetrics } from '../src/metrics.js';
import { CQL } from '../src/reading-batches.js';
import { packValues } from '../src/reading-values.js';
import { Sender } from '../src/sender.js';
import { DAY_MS } from '../src/timestamps.js';

const { LocalDate } = cassandra.types;
const D1 = ['G', new LocalDate(2026, 11, 23)];
const D2 = ['G', new LocalDate(2026, 11, 22)];
const WALL_MS = 1_780_001_999_500; // half a second before a full UTC hour

setupLogging('critical', { write: () => true }); // its warnings are not what is tested here

it('a mark is fresh for MARK_FRESH_MS from its attempt, then needed again', () => {
  const marks = new DayMarks();
  assert.equal(MARK_FRESH_MS, 300_000); // half the analytics' default --clock-skew of 600 s
  const [unmarked, toMark] = marks.needs([D1, D2, D1], 10_000);
  assert.deepEqual([...unmarked], ['2026-11-23|G', '2026-11-22|G']);
  assert.deepEqual(toMark, [D1, D2]);
  const mark = {};
  marks.begin([D1, D2], mark);
  assert.equal(marks.pending(...D1), mark);
  assert.deepEqual(marks.needs([D1], 11_000)[1], []); // in flight: waits for it, no second mark
  marks.acknowledged(mark, [D1, D2], 10_000, 12_000);
  assert.equal(marks.pending(...D1), undefined);
  assert.equal(marks.size, 2);
  assert.equal(marks.needs([D1, D2], 10_000 + MARK_FRESH_MS)[0].size, 0);
  assert.deepEqual(marks.needs([D1], 10_001 + MARK_FRESH_MS)[1], [D1]);
});

it('an older attempt acknowledged late does not make a mark older', () => {
  const marks = new DayMarks();
  marks.acknowledged({}, [D1], 100_000, 100_500);
  marks.acknowledged({}, [D1], 50_000, 101_000);
  assert.ok(marks.isFresh(...D1, 100_000 + MARK_FRESH_MS));
});

it('stale marks are dropped and the count is bounded', () => {
  const marks = new DayMarks(300_000, 3);
  const day = (source) => [source, D1[1]];
  for (let i = 0; i < 3; i++) marks.acknowledged({}, [day(`s${i}`)], i * 1000, i * 1000);
  assert.equal(marks.size, 3);
  marks.acknowledged({}, [day('s3')], 3000, 3000); // past the bound: the oldest goes
  assert.equal(marks.size, 3);
  assert.ok(!marks.isFresh(...day('s0'), 3000) && marks.isFresh(...day('s1'), 3000));
  marks.acknowledged({}, [day('s4')], 302_500, 302_500); // s1 and s2 are stale by now
  assert.equal(marks.size, 2);
  assert.ok(marks.isFresh(...day('s3'), 302_500));
});

it('a mark is stamped and bucketed at the instant of its attempt', () => {
  assert.deepEqual(markInstant(WALL_MS), [WALL_MS - (WALL_MS % HOUR_MS), WALL_MS]);
  assert.deepEqual(markInstant(WALL_MS + 500), [WALL_MS + 500, WALL_MS + 500]); // the next hour starts there
});

// --- the sender, with a fake client and clock ------------------------------------------------------------------

let clock;
beforeEach(() => {
  clock = { mono: 1000, wall: WALL_MS };
  mock.method(performance, 'now', () => clock.mono);
  mock.timers.enable({ apis: ['Date'], now: WALL_MS });
});
afterEach(() => {
  mock.restoreAll();
  mock.timers.reset();
});

function advance(ms) {
  clock.mono += ms;
  clock.wall += ms;
  mock.timers.setTime(clock.wall);
}

/** What a statement is: mark, readings, source_days or latest. */
function kind(statement) {
  const query = statement.queries ? statement.queries[0].query : statement.query;
  return { [CQL.reading]: 'readings', [CQL.dayChange]: 'mark', [CQL.sourceDay]: 'source_days',
    [CQL.latest]: 'latest' }[query];
}

function rig() {
  const frames = [];
  const acked = [];
  const sent = []; // [statement, resolve, reject]
  const answer = (statement) => new Promise((resolve, reject) => sent.push([statement, resolve, reject]));
  const client = { batch: (queries) => answer({ queries }), execute: (query, params) => answer({ query, params }) };
  const s = new Sender({ spool: { take: (after, limit) => frames.filter((f) => f.id > after).slice(0, limit),
    damagedRows: () => [] },
    clientFactory: null, keyspace: 'k', batchRows: 100, maxInFlight: 8, retryMaxS: 1, metrics: createMetrics(),
    onAcked: (range) => acked.push(range) });
  s.client = client;
  const add = (id, [source, day]) => {
    const ts = Date.UTC(day.year, day.month - 1, day.day, 1);
    assert.equal(Math.floor(ts / DAY_MS) * DAY_MS, Date.UTC(day.year, day.month - 1, day.day));
    frames.push({ id, source, ts_ms: ts, received_ms: ts, ...packValues([['n', id]]) });
  };
  /** One round of the sender's loop: what it sent, `latest` writes left out (answered at once). */
  const step = async () => {
    await new Promise(setImmediate); // answers reach the pump
    s.more = true;
    const round = s.step(true);
    s.wake();
    await round;
    const out = sent.splice(0).filter(([statement, resolve]) => kind(statement) !== 'latest' || resolve());
    return out.map(([statement, resolve, reject]) => ({ statement, kind: kind(statement), ok: resolve,
      fail: () => reject(new Error('unreachable')) }));
  };
  return { s, add, step, acked };
}

const kinds = (sent) => sent.map((request) => request.kind);
const markRows = (statement) => statement.queries.map(({ params: [bucket, day, source, writtenAt] }) =>
  [bucket.getTime(), String(day), source, writtenAt.getTime()]);

it('the marks go first and the readings once they are acknowledged', async () => {
  const { s, add, step, acked } = rig();
  add(1, D1);
  add(2, D2);
  let sent = await step();
  assert.deepEqual(kinds(sent), ['mark', 'source_days', 'source_days']); // source_days as before; readings wait
  const bucket = WALL_MS - (WALL_MS % HOUR_MS);
  assert.deepEqual(markRows(sent[0].statement), [[bucket, '2026-11-23', 'G', WALL_MS],
    [bucket, '2026-11-22', 'G', WALL_MS]]);
  sent[1].ok();
  sent[2].ok();
  assert.deepEqual(kinds(await step()), []);
  assert.deepEqual(acked, []);
  advance(4);
  sent[0].ok();
  sent = await step();
  assert.deepEqual(kinds(sent), ['readings', 'readings']);
  assert.deepEqual(acked, []);
  sent.forEach((request) => request.ok());
  await step();
  assert.deepEqual(acked, [[1, 2]]); // at once: no flush period to wait for
  assert.ok(s.idle);

  add(3, D1); // within MARK_FRESH_MS of the mark: no new one
  advance(MARK_FRESH_MS - 4);
  sent = await step();
  assert.deepEqual(kinds(sent), ['readings']);
  sent[0].ok();
  await step();
  assert.deepEqual(acked.at(-1), [3, 3]);

  add(4, D1);
  advance(1); // the mark's attempt was sent MARK_FRESH_MS + 1 ms ago
  assert.deepEqual(kinds(await step()), ['mark']);
});

it('a retried mark is stamped again, and a stale readings retry is marked again', async () => {
  const { s, add, step, acked } = rig();
  add(1, D1);
  let sent = await step();
  assert.deepEqual(kinds(sent), ['mark', 'source_days']);
  sent[1].ok();
  sent[0].fail();
  await step();
  advance(600); // the retry's wait, past the hour
  sent = await step();
  assert.deepEqual(kinds(sent), ['mark']);
  const hour = WALL_MS + 600 - ((WALL_MS + 600) % HOUR_MS);
  assert.deepEqual(markRows(sent[0].statement), [[hour, '2026-11-23', 'G', WALL_MS + 600]]); // this attempt's instant
  sent[0].ok();
  sent = await step();
  assert.deepEqual(kinds(sent), ['readings']);
  sent[0].fail(); // a long outage begins
  await step();
  advance(MARK_FRESH_MS + 1); // the retry is due, and the mark is stale by then
  sent = await step();
  assert.deepEqual(kinds(sent), ['mark']);
  assert.equal(markRows(sent[0].statement)[0][3], WALL_MS + 600 + MARK_FRESH_MS + 1);
  sent[0].ok();
  sent = await step();
  assert.deepEqual(kinds(sent), ['readings']);
  assert.deepEqual(acked, []);
  sent[0].ok();
  await step();
  assert.deepEqual(acked, [[1, 1]]);
  assert.ok(s.idle);
});
