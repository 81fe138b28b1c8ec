// The status page's pure parts (status-tally.js against gateway/contract/vectors/status_tally.jsonl,
// status-document.js), its routes on the metrics listener, and --version. The page itself, in a real browser
// against a running gateway: gateway/conformance/test_status_page.py.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { describe, it } from 'node:test';

import { main } from '../src/cli.js';
import { pageCsp } from '../src/http-rules.js';
import { createMetrics } from '../src/metrics.js';
import { startStatusServer } from '../src/status-server.js';
import { statusDocument } from '../src/status-document.js';
import { PAGE, StatusPage, UNITS } from '../src/status-page.js';
import { SourceTally, isStale } from '../src/status-tally.js';
import { VERSION } from '../src/version.js';
import { contractVectors } from '../test-support/vectors.js';

describe('status_tally.jsonl', () => {
  for (const c of contractVectors('status_tally.jsonl')) {
    it(c.name, () => {
      const tally = new SourceTally();
      for (const step of c.steps) {
        if (step.frame) {
          const f = step.frame;
          tally.frame(f.source, f.received_ms, f.ts_ms, f.values);
        } else if (step.duplicate) {
          tally.duplicate(step.duplicate);
        } else if (step.gap) {
          tally.gap(step.gap.source, step.gap.missing);
        } else if (step.forget) {
          tally.forget(step.forget);
        } else if (step.reject) {
          tally.reject(step.reject.source, step.reject.reason, step.reject.keyed, step.reject.received_ms);
        } else {
          const got = tally.view(step.view).map((v) => ({ source: v.source, last_received_ms: v.lastReceivedMs,
            values_ts_ms: v.valuesTsMs, values: v.values, frames_per_minute: v.framesPerMinute,
            seq_gaps: v.seqGaps, duplicates: v.duplicates,
            stale: isStale(v.lastReceivedMs, step.view, c.params.stale_after_ms), rejects: v.rejects,
            refused_burst: v.refusedBurst }));
          assert.deepEqual(got, step.expect, `view at ${step.view}`);
        }
      }
    });
  }
});

const FACTS = { version: '1.2.3', implementation: 'node', policy: 'batch', startedMs: 1_000_000, staleAfterS: 60 };

describe('the status document', () => {
  it('has every field, units from the contract, and the alert states of the seam', () => {
    const tally = new SourceTally();
    tally.frame('greenhouse', 1_001_000, 1_000_500, [['temp_in', 4.25], ['odd', 1]]);
    tally.reject('greenhouse', 'bad_mac', false, 1_000_500);
    tally.series.frame('greenhouse', 1_001_000, [['temp_in', 4.25], ['odd', 1]]);
    const alerts = new Map([
      ['greenhouse', [{ rule: 'z', state: 'ok', since: null },
        { rule: 'frost', state: 'firing', since: '1970-01-01T00:17:30.000Z' }]],
      ['cellar', [{ rule: 'silent', state: 'firing', since: '1970-01-01T00:16:40.000Z' }]]]);
    const moment = { nowMs: 1_061_000, rejects: new Map([['too_long', 0], ['bad_crc', 2]]), spoolFrames: 7,
      heldFrames: 1, oldestUnsentMs: 1_031_000, cassandraUp: false, lastError: ['timeout', 1_060_000] };
    const doc = statusDocument(FACTS, moment, tally.view(moment.nowMs), alerts, UNITS,
      tally.series.view(moment.nowMs));
    assert.deepEqual(doc.gateway, { version: '1.2.3', implementation: 'node', policy: 'batch',
      started: '1970-01-01T00:16:40.000Z', uptime_s: 61 });
    const [cellar, greenhouse] = doc.sources;
    assert.deepEqual(cellar, { source: 'cellar', last_frame: null, age_s: null, stale: true, values_at: null,
      values: [], frames_per_minute: 0, seq_gaps: 0, duplicates: 0, rejects: {}, refused_burst: false,
      alerts: alerts.get('cellar'), series: [] });
    assert.deepEqual(greenhouse.values, [{ metric: 'temp_in', value: 4.25, unit: '\u00b0C' },
      { metric: 'odd', value: 1, unit: null }]);
    assert.deepEqual([greenhouse.age_s, greenhouse.stale, greenhouse.rejects], [60, false, { bad_mac: 1 }]);
    assert.deepEqual(greenhouse.alerts.map((a) => a.rule), ['frost', 'z']);
    assert.deepEqual(greenhouse.series, [{ metric: 'odd', points: [['1970-01-01T00:15:00.000Z', 1, 1, 1]] },
      { metric: 'temp_in', points: [['1970-01-01T00:15:00.000Z', 4.25, 4.25, 4.25]] }]);
    assert.deepEqual(doc.rejects, { bad_crc: 2 });
    assert.deepEqual(doc.spool, { frames: 7, held_frames: 1, oldest_unsent_age_s: 30 });
    assert.deepEqual(doc.cassandra, { state: 'down', last_error: { kind: 'timeout', at: '1970-01-01T00:17:40.000Z' } });
  });
});

async function get(port, path, method = 'GET') {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method });
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text(),
    headers: response.headers };
}

/** The status code of the answer to a request head sent as is. */
function raw(port, head) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
    let text = '';
    socket.on('data', (data) => { text += data; });
    socket.on('end', () => resolve(Number(text.split(' ')[1])));
    socket.on('error', reject);
  });
}

describe('the status routes', () => {
  it('serve the page and the JSON beside /metrics; anything else 404, other methods 405', async () => {
    const metrics = createMetrics();
    metrics.rejects.inc({ reason: 'bad_crc' }, 4);
    const tally = new SourceTally();
    tally.frame('A', 5000, 5000, [['temp', 3.125]]);
    const spool = { depth: 3, heldFrames: 0, oldestReceivedMs: () => { throw new Error('closed'); } };
    const page = new StatusPage(FACTS, { tally, spool, lastError: () => null, metrics,
      alertStates: () => ({ A: [{ rule: 'r', state: 'pending', since: null }] }) });
    const server = await startStatusServer('127.0.0.1:0', metrics.registry, page, ['pi.lan']);
    try {
      const html = await get(server.port, '/');
      assert.deepEqual([html.status, html.type, html.body], [200, 'text/html; charset=utf-8', PAGE.toString()]);
      assert.equal(PAGE.toString(), readFileSync(new URL('../../contract/status.html', import.meta.url), 'utf8'));
      assert.deepEqual([html.headers.get('content-security-policy'), html.headers.get('x-content-type-options')],
        [pageCsp(PAGE), 'nosniff']);
      const json = await get(server.port, '/status.json');
      assert.deepEqual([json.status, json.type], [200, 'application/json']);
      const doc = JSON.parse(json.body);
      assert.deepEqual(doc.sources[0].values, [{ metric: 'temp', value: 3.125, unit: '\u00b0C' }]);
      assert.deepEqual(doc.sources[0].alerts, [{ rule: 'r', state: 'pending', since: null }]);
      assert.deepEqual([doc.rejects, doc.spool], [{ bad_crc: 4 }, { frames: 3, held_frames: 0,
        oldest_unsent_age_s: null }]);
      assert.equal((await get(server.port, '/status.json', 'HEAD')).body, '');
      assert.equal((await get(server.port, '/metrics')).status, 200);
      for (const path of ['/index.html', '/status', '/metrics/x']) {
        assert.equal((await get(server.port, path)).status, 404);
      }
      assert.equal((await get(server.port, '/', 'POST')).status, 405);
      const close = 'Connection: close\r\n\r\n';
      assert.equal(await raw(server.port, `GET // HTTP/1.1\r\nHost: 127.0.0.1\r\n${close}`), 404);
      assert.equal(await raw(server.port, `GET http://[ HTTP/1.1\r\nHost: 127.0.0.1\r\n${close}`), 404);
      assert.equal(await raw(server.port, `GET / HTTP/1.1\r\nHost: attacker.example\r\n${close}`), 421);
      assert.equal(await raw(server.port, `GET / HTTP/1.1\r\nHost: pi.lan:80\r\n${close}`), 200);
      const silent = await get(server.port, '/healthz'); // the one frame was read 5 s after the epoch
      assert.deepEqual([silent.status, silent.type, silent.headers.get('cache-control')],
        [503, 'text/plain; charset=utf-8', 'no-store']);
      assert.match(silent.body, /^no frame from any board for \d+ s\n$/);
      const nowMs = Date.now();
      tally.frame('A', nowMs, nowMs, [['temp', 3]]);
      assert.deepEqual(await get(server.port, '/healthz').then((a) => [a.status, a.body]), [200, 'ok\n']);
      page.downSince = () => nowMs - 400_000;
      const down = await get(server.port, '/healthz');
      assert.deepEqual([down.status, down.body.slice(0, 26)], [503, 'cassandra unreachable for ']);
      assert.deepEqual(await get(server.port, '/healthz', 'HEAD').then((a) => [a.status, a.body]), [503, '']);
      const refused = (await metrics.http_refused.get()).values.map((v) => v.labels.status);
      assert.ok(!refused.includes('503'), refused);
      page.alertStates = () => { throw new Error('no states'); };
      const failed = await get(server.port, '/status.json');
      assert.deepEqual([failed.status, failed.body], [500, '/status.json failed: no states\n']);
    } finally {
      await server.close();
    }
  });
});

describe('build_info and the last-seen gauge', () => {
  it('build_info is 1 with its labels; last seen is read from the tally at each scrape, in seconds', async () => {
    const metrics = createMetrics();
    metrics.build_info.set({ version: '1.2.3', implementation: 'node', policy: 'batch' }, 1);
    metrics.last_seen.read = () => new Map([['A', 5_500], ['B', 1_795_000_000_123]]);
    const text = await metrics.registry.metrics();
    assert.match(text, /^telemetry_gateway_build_info\{version="1.2.3",implementation="node",policy="batch"\} 1$/m);
    assert.match(text, /^telemetry_gateway_source_last_seen_seconds\{source="A"\} 5.5$/m);
    assert.match(text, /^telemetry_gateway_source_last_seen_seconds\{source="B"\} 1795000000.123$/m);
    metrics.last_seen.read = () => new Map();
    assert.doesNotMatch(await metrics.registry.metrics(), /source_last_seen_seconds\{/);
  });
});

describe('--version', () => {
  it('prints the name, the package version and the implementation', async () => {
    let out = '';
    assert.equal(await main(['--version'], { stdout: { write: (text) => { out += text; } } }), 0);
    assert.equal(out, `telemetry-gateway ${VERSION} (node)\n`);
    assert.equal(VERSION, JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
  });
});
