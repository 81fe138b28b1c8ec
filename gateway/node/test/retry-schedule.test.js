// When a failed request is sent again. Times in ms.

import assert from 'node:assert/strict';
import { it } from 'node:test';

import { backoffS } from '../src/backoff.js';
import { RetrySchedule } from '../src/retry-schedule.js';

// What RetrySchedule touches of request-pump.js's Request.
const request = (statement) => ({ due: 0, statement, owner: null, attempts: 0 });

it('failed requests come back on the shared backoff schedule, earliest first', () => {
  const retries = new RetrySchedule(5.0);
  const late = request('late');
  const early = request('early');
  retries.retryLater(late, 99_000);
  assert.deepEqual(retries.due(99_000 + backoffS(1, 5.0) * 1000), [late]); // sent again, and failed again: waits longer
  retries.retryLater(late, 100_000);
  retries.retryLater(early, 100_000);
  assert.equal(late.attempts, 2);
  assert.equal(late.due, 100_000 + backoffS(2, 5.0) * 1000);
  assert.equal(early.due, 100_000 + backoffS(1, 5.0) * 1000);
  assert.ok(early.due < late.due);
  assert.deepEqual(retries.due(100_000), []);
  assert.equal(retries.size, 2);
  const due = retries.due(late.due);
  assert.equal(due[0], early);
  assert.equal(due[1], late);
  assert.equal(retries.size, 0);
});

it('retries wait at most the configured maximum', () => {
  const retries = new RetrySchedule(2.0);
  const r = request('x');
  for (let i = 0; i < 30; i++) {
    retries.retryLater(r, 0);
    retries.due(1e9);
  }
  assert.equal(r.due, 2000);
});

it('many requests come back in due order, equal times in the order they failed', () => {
  const retries = new RetrySchedule(60);
  const requests = [];
  let seed = 7;
  for (let i = 0; i < 500; i++) {
    seed = (seed * 48_271) % 2_147_483_647;
    const r = { ...request(i), attempts: seed % 8 };
    requests.push(r);
    retries.retryLater(r, (seed >> 8) % 1000);
  }
  const order = [...retries.due(500), ...retries.due(Infinity)].map((r) => r.statement);
  const expected = [...requests].sort((a, b) => a.due - b.due || a.statement - b.statement).map((r) => r.statement);
  assert.deepEqual(order, expected);
  assert.equal(retries.size, 0);
});

it('says how long until the earliest retry is due (the sender sleeps until then)', () => {
  const retries = new RetrySchedule(5.0);
  assert.equal(retries.nextDueMs(0), Infinity);
  const failed = request('failed');
  retries.retryLater(failed, 1_000);
  assert.equal(retries.nextDueMs(1_000), backoffS(1, 5.0) * 1000);
  assert.ok(retries.nextDueMs(failed.due + 10) < 0); // overdue: no sleep
});
