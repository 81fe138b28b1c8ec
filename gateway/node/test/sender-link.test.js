// The sender tells the spool its link to Cassandra (onLink(connected, writeOk)), on a change only: the deferred spool
// holds frames in memory only while Cassandra is connected and its last write succeeded (spool/policies.js).

import assert from 'node:assert/strict';
import { it } from 'node:test';

import { setupLogging } from '../src/logs.js';
import { createMetrics } from '../src/metrics.js';
import { Request } from '../src/request-pump.js';
import { Sender } from '../src/sender.js';

setupLogging('critical', { write: () => true }); // its warnings are not what is tested here

function sender(clientFactory) {
  const told = [];
  const s = new Sender({ spool: null, clientFactory, keyspace: 'k', batchRows: 250, maxInFlight: 32, retryMaxS: 10,
    metrics: createMetrics(), onAcked: () => {}, onLink: (connected, writeOk) => told.push([connected, writeOk]) });
  return [s, told];
}

const client = (connect) => ({ connect, shutdown: async () => {}, hosts: { values: () => [] } });

it('says when it connects and when a connect fails, not again while nothing changed', async () => {
  let reachable = false;
  const [s, told] = sender(() => client(async () => {
    if (!reachable) throw new Error('unreachable');
  }));
  assert.equal(await s.connect(), false); // not connected at the start either: no change
  assert.deepEqual(told, []);
  reachable = true;
  assert.equal(await s.connect(), true);
  assert.deepEqual(told, [[true, true]]);
  reachable = false;
  s.client = null;
  await s.connect();
  await s.connect();
  assert.deepEqual(told, [[true, true], [false, true]]);
});

it('says when a write fails and when the next one succeeds', async () => {
  const [s, told] = sender(() => client(async () => {}));
  await s.connect();
  const answer = (error) => {
    s.ledger.expect(1);
    s.pump.inFlight += 1;
    s.pump.answer(new Request(0, { query: 'q', params: [] }, null), error);
    s.settle();
  };
  answer(new Error('write timeout'));
  answer(new Error('write timeout'));
  answer(null);
  answer(null);
  assert.deepEqual(told, [[true, true], [true, false], [true, true]]);
});
