// The listener's head timeout (gateway/contract/status.md, "The listener", Time) on a real server: slow connections
// opened while pipelining floods are being closed each get their 408 and are closed within the 5 s and a margin;
// idle and later-request clocks; the 408 counted once.

import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';

import { answered, headParsed, opened, tick } from '../src/head-clock.js';
import { createMetrics } from '../src/metrics.js';
import { startStatusServer } from '../src/status-server.js';

const HEAD_MS = 5000;
const MARGIN_MS = 1000;
const GET = 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n';

/** A connection that sends `first`, then a byte every `dripMs` (0: none); resolves how it ended. */
function slow(port, first, dripMs = 500) {
  return new Promise((resolve) => {
    const opened = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    let drip = null;
    const done = () => {
      clearInterval(drip);
      socket.destroy();
      resolve({ ms: Date.now() - opened, data });
    };
    socket.setEncoding('latin1');
    socket.on('connect', () => {
      if (first) socket.write(first);
      if (dripMs) drip = setInterval(() => socket.write('a'), dripMs);
    });
    socket.on('data', (chunk) => { data += chunk; });
    socket.on('end', done);
    socket.on('close', done);
    socket.on('error', () => {});
    setTimeout(done, HEAD_MS + 4000).unref(); // resolves as "still open" well past the limit
  });
}

/** A connection that pipelines `count` requests and reads none of the answers (the listener closes it). */
function flood(port, count = 1000) {
  const socket = net.connect(port, '127.0.0.1', () => socket.write(`${GET}X-Slow: no\r\n\r\n`.repeat(count)));
  socket.pause();
  socket.on('error', () => {});
  return socket;
}

const refused408 = async (metrics) => (await metrics.registry.getSingleMetric('telemetry_gateway_http_refused_total')
  .get()).values.find((v) => v.labels.status === '408')?.value ?? 0;

describe('a head clock', () => {
  it('refuses a first head late from the opening, not before', () => {
    const clock = opened(1000, 0);
    assert.equal(tick(clock, 5999, 40, HEAD_MS)[1], null);
    assert.equal(tick(clock, 6000, 40, HEAD_MS)[1], 'refuse');
  });

  it('stops while answers are pending, then closes a connection idle after them without an answer', () => {
    let clock = headParsed(headParsed(opened(0, 0))); // two pipelined
    assert.equal(tick(clock, 60_000, 99, HEAD_MS)[1], null);
    clock = answered(clock, 100, 99);
    assert.equal(clock.phase, 'busy');
    clock = answered(clock, 200, 99);
    assert.equal(tick(clock, 5199, 99, HEAD_MS)[1], null);
    assert.equal(tick(clock, 5200, 99, HEAD_MS)[1], 'close');
  });

  it('times a later head from the tick that first saw its bytes', () => {
    let clock = answered(headParsed(opened(0, 0)), 1000, 50);
    let action;
    [clock, action] = tick(clock, 4000, 51, HEAD_MS); // a byte came after the answer
    assert.deepEqual([clock.phase, clock.since, action], ['head', 4000, null]);
    assert.equal(tick(clock, 8999, 60, HEAD_MS)[1], null);
    assert.equal(tick(clock, 9000, 60, HEAD_MS)[1], 'refuse');
    assert.equal(tick(headParsed(clock), 20_000, 90, HEAD_MS)[1], null);
  });
});

describe('the head timeout', { concurrency: true }, () => {
  it('closes every slow connection opened while pipelining floods are closed, with a 408 counted once', async () => {
    const metrics = createMetrics();
    const server = await startStatusServer('127.0.0.1:0', metrics.registry);
    const floods = [];
    try {
      const slows = [];
      const until = Date.now() + 3000;
      while (Date.now() < until) { // ~30 tries: a flood and two slow connections in the same moment
        floods.push(flood(server.port));
        slows.push(slow(server.port, GET), slow(server.port, 'GET /'));
        await new Promise((resolve) => { setTimeout(resolve, 100); });
      }
      const ended = await Promise.all(slows);
      const late = ended.filter(({ ms }) => ms > HEAD_MS + MARGIN_MS);
      assert.equal(late.length, 0, `${late.length} of ${ended.length} slow connections open past 6 s`);
      const early = ended.filter(({ ms }) => ms < HEAD_MS - 50);
      assert.equal(early.length, 0, `${early.length} closed before 5 s (dropped over the bound?)`);
      const no408 = ended.filter(({ data }) => !data.startsWith('HTTP/1.1 408 '));
      assert.equal(no408.length, 0, `${no408.length} without a 408: ${no408[0]?.data.slice(0, 80)}`);
      assert.equal(await refused408(metrics), ended.length);
    } finally {
      for (const socket of floods) socket.destroy();
      await server.close();
    }
  });

  it('a kept-alive connection: idle closed without an answer; a later head 408 from its first byte', async () => {
    const server = await startStatusServer('127.0.0.1:0', createMetrics().registry);
    try {
      const [idle, later] = await Promise.all([0, 2000].map((laterMs) => new Promise((resolve) => {
        const socket = net.connect(server.port, '127.0.0.1', () => socket.write(`${GET}\r\n`));
        let data = '';
        let answeredAt = null;
        let drip = null;
        socket.setEncoding('latin1');
        socket.on('data', (chunk) => {
          data += chunk;
          if (answeredAt === null && data.includes('# HELP')) {
            answeredAt = Date.now();
            if (laterMs) {
              setTimeout(() => {
                socket.write('GET /');
                drip = setInterval(() => socket.write('a'), 500);
              }, laterMs);
            }
          }
        });
        socket.on('error', () => {});
        socket.on('close', () => {
          clearInterval(drip);
          resolve({ ms: Date.now() - answeredAt, after: data.slice(data.lastIndexOf('HTTP/1.1 ')) });
        });
      })));
      assert.ok(idle.ms >= HEAD_MS - 50 && idle.ms <= HEAD_MS + MARGIN_MS, `idle closed after ${idle.ms} ms`);
      assert.ok(idle.after.startsWith('HTTP/1.1 200 '), 'an idle connection is closed without an answer');
      assert.ok(later.ms >= 2000 + HEAD_MS - 50 && later.ms <= 2000 + HEAD_MS + MARGIN_MS, `${later.ms} ms`);
      assert.ok(later.after.startsWith('HTTP/1.1 408 '), later.after.slice(0, 40));
    } finally {
      await server.close();
    }
  });
});
