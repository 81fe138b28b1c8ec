// How long the sender's loop sleeps (the Python gateway's Sender._wait_s): answers, new frames and a stop wake it
// at once; otherwise it sleeps until a flush of latest or a retry is due, at most a second, so an idle Pi's
// gateway wakes about once a second, not twenty times.

import assert from 'node:assert/strict';
import { it } from 'node:test';

import { createMetrics } from '../src/metrics.js';
import { Sender } from '../src/sender.js';

function sender() {
  return new Sender({ spool: null, clientFactory: null, keyspace: 'k', batchRows: 250, maxInFlight: 32,
    retryMaxS: 10, metrics: createMetrics(), onAcked: () => {} });
}

it('sleeps a second with nothing to do, 50 ms while the spool may hold more', () => {
  const s = sender();
  s.more = false;
  assert.equal(s.waitMs(0), 1000);
  s.more = true;
  assert.equal(s.waitMs(0), 50);
});

it('wakes for the next flush of latest, and for the next retry', () => {
  const s = sender();
  s.more = false;
  s.latestFlushed = 10_000;
  s.latest.merge([{ source: 'G', metric: 'n', ts_ms: 1, value: 1 }]);
  assert.equal(s.waitMs(10_600), 1000); // latest every 2 s, and never more than a second asleep
  assert.equal(s.waitMs(11_500), 500);
  assert.equal(s.waitMs(12_100), 0); // overdue
  s.latest.take();
  s.retries.retryLater({ due: 0, attempts: 0 }, 10_000);
  assert.ok(s.waitMs(10_000) > 0 && s.waitMs(10_000) <= 1000);
  assert.equal(s.waitMs(10_000 + 60_000), 0);
});
