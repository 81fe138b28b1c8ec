// The metrics of gateway/contract/metrics.json, as gateway/conformance/test_metrics_contract.py checks them on a
// running gateway (exactly the declared families, types, help texts, labels and buckets; nothing else), one
// attribute per family, the counted histogram, and the /metrics endpoint. (tests/test_gateway_shapes.py holds the
// attribute names alike in both gateways.)

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { describe, it } from 'node:test';

import client from 'prom-client';

import { CountedHistogram, LATENCY_BUCKETS, createMetrics, leText } from '../src/metrics.js';
import { parseListen, startStatusServer } from '../src/status-server.js';
import { contractVectors } from '../test-support/vectors.js';

const CONTRACT = JSON.parse(readFileSync(new URL('../../contract/metrics.json', import.meta.url), 'utf8')).metrics;

const VECTORS = contractVectors('metric_samples.jsonl');

/** One use of a vector (metric_samples.jsonl) on m (a createMetrics()'s), its family found by its name. */
function apply(m, use) {
  const metric = Object.values(m).find((candidate) => candidate.name === use.family);
  assert.ok(metric, `no metric ${use.family}`);
  const labels = Object.keys(use.labels).length ? [use.labels] : [];
  if ('inc' in use) metric.inc(...labels, use.inc);
  else if ('set' in use) metric.set(...labels, use.set);
  else metric.observeMany(use.observe, use.count ?? 1);
}

/** Every vector's uses on one createMetrics(). */
function used() {
  const m = createMetrics();
  for (const c of VECTORS) for (const use of c.uses) apply(m, use);
  return m;
}

/** {family name: rest of the line} of the exposition's `# HELP` or `# TYPE` lines (HELP unescaped). */
function declaredLines(text, kind) {
  const found = {};
  for (const [, name, rest] of text.matchAll(new RegExp(`^# ${kind} (\\S+) (.*)$`, 'gm'))) {
    assert.ok(!(name in found), `${kind} line twice for ${name}`);
    found[name] = kind === 'HELP' ? rest.replaceAll('\\n', '\n').replaceAll('\\\\', '\\') : rest;
  }
  return found;
}

/** The contract family a sample belongs to (a histogram's by its _bucket, _count or _sum), or undefined. */
function familyOf(contract, sample) {
  if (contract[sample] && contract[sample].type !== 'histogram') return contract[sample];
  const histogram = contract[sample.replace(/_(bucket|count|sum)$/, '')];
  return histogram?.type === 'histogram' && histogram.name !== sample ? histogram : undefined;
}

describe('createMetrics', () => {
  it('has one attribute per contract family, and its own registry', () => {
    const metrics = createMetrics();
    const families = Object.entries(metrics).filter(([key]) => key !== 'registry').map(([, metric]) => metric.name);
    assert.deepEqual([...families].sort(), CONTRACT.map((family) => family.name).sort());
    assert.ok(metrics.registry instanceof client.Registry && metrics.registry !== client.register);
    createMetrics(); // a second gateway in the process: no clash
    assert.equal(client.register.getMetricsAsArray().length, 0);
  });

  it('exposes exactly the contract\'s families, types, help texts, labels and buckets', async () => {
    const text = await used().registry.metrics();
    const contract = Object.fromEntries(CONTRACT.map((family) => [family.name, family]));
    const types = declaredLines(text, 'TYPE');
    const helps = declaredLines(text, 'HELP');
    assert.deepEqual(types, Object.fromEntries(CONTRACT.map((f) => [f.name, f.type])));
    assert.deepEqual(helps, Object.fromEntries(CONTRACT.map((f) => [f.name, f.help])));
    assert.doesNotMatch(text, /_created/);

    for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) {
      const [, sample, labelText = ''] = line.match(/^(\w+)(?:\{(.*)\})? \S+$/) ?? assert.fail(line);
      const labels = Object.fromEntries([...labelText.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
      const family = familyOf(contract, sample);
      assert.ok(family, `sample ${sample} belongs to no family of metrics.json`);
      if (sample.endsWith('_bucket')) {
        const le = labels.le === '+Inf' ? Infinity : Number(labels.le);
        delete labels.le;
        assert.ok([...family.buckets, Infinity].includes(le), line);
      }
      assert.deepEqual(Object.keys(labels).sort(), Object.keys(family.labels).sort(), line);
      for (const [label, value] of Object.entries(labels)) {
        const allowed = family.labels[label];
        assert.ok(Array.isArray(allowed) ? allowed.includes(value) : value !== '', line);
      }
    }
  });
});

/** {family: [[sample, labels, value]]} of an exposition text, in its order (values as the text reads). */
function exposed(text, contract) {
  const samples = {};
  for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) {
    const [, sample, labelText = '', value] = line.match(/^(\w+)(?:\{(.*)\})? (\S+)$/) ?? assert.fail(line);
    const labels = Object.fromEntries([...labelText.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)]
      .map((m) => [m[1], m[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c))]));
    const family = familyOf(contract, sample) ?? assert.fail(`sample ${sample} belongs to no family`);
    (samples[family.name] ??= []).push([sample, labels, value === '+Inf' ? Infinity : Number(value)]);
  }
  return samples;
}

/** Samples in one order (the exposition's order is not the contract's): by name, then labels. */
const sorted = (samples) => samples.map((sample) => [JSON.stringify(sample.slice(0, 2)), sample]).sort()
  .map(([, sample]) => sample);

// The exposition after given uses: each case's families expose exactly its samples, every other family is as a
// new gateway exposes it (without labels: its series at 0; with labels: nothing).
describe('metric_samples.jsonl', () => {
  const contract = Object.fromEntries(CONTRACT.map((family) => [family.name, family]));
  for (const c of VECTORS) {
    it(c.name, async () => {
      const m = createMetrics();
      for (const use of c.uses) apply(m, use);
      const got = exposed(await m.registry.metrics(), contract);
      for (const family of CONTRACT) {
        if (family.name in c.expect) {
          assert.deepStrictEqual(sorted(got[family.name] ?? []), sorted(c.expect[family.name]), family.name);
        } else if (Object.keys(family.labels).length) assert.equal(got[family.name], undefined, family.name);
        else assert.ok(got[family.name]?.every(([, , value]) => value === 0), family.name);
      }
    });
  }
});

describe('CountedHistogram', () => {
  it('writes le in OpenMetrics\' canonical form', () => {
    assert.deepEqual([0.001, 0.0025, 1, 300, 1e6, 1234567.5, 1e21, 1e-7, Infinity].map(leText),
      ['0.001', '0.0025', '1.0', '300.0', '1000000.0', '1234567.5', '1e+21', '1e-7', '+Inf']);
  });

  it('exposes counted observations as prom-client\'s Histogram exposes single ones', async () => {
    const ours = new client.Registry();
    const theirs = new client.Registry();
    const counted = new CountedHistogram({ name: 'lat_seconds', help: 'Latency', buckets: LATENCY_BUCKETS, registers: [ours] });
    const reference = new client.Histogram({ name: 'lat_seconds', help: 'Latency', buckets: [...LATENCY_BUCKETS],
      registers: [theirs] });
    // on a bound, between bounds, past the last bound, zero
    for (const [amount, count] of [[0.05, 3], [0.0123, 1], [400, 2], [0, 5], [0.001, 1], [0.0501, 4]]) {
      counted.observeMany(amount, count);
      for (let i = 0; i < count; i++) reference.observe(amount);
    }
    counted.observe(0.2);
    reference.observe(0.2);
    const exposition = async (registry) => (await registry.metrics()).split('\n').filter((l) => !l.includes('_sum'))
      .map((line) => line.replace(/le="([^"+]+)"/, (_, le) => `le="${Number(le)}"`)); // 1.0 is 1
    assert.deepEqual(await exposition(ours), await exposition(theirs));
    assert.ok((await exposition(ours)).includes('lat_seconds_bucket{le="0.05"} 10'));
    assert.ok((await exposition(ours)).includes('lat_seconds_count 17'));
    const sum = (await ours.metrics()).match(/^lat_seconds_sum (\S+)$/m)[1];
    assert.ok(Math.abs(Number(sum) - 800.5637) < 1e-9, sum); // a product instead of a sum of count terms
  });

  it('takes a million frames in one call per thousand', async () => { // how fast: the benchmark's business
    const metrics = createMetrics();
    for (let i = 0; i < 1000; i++) metrics.delivery_latency.observeMany(0.02, 1000);
    const text = await metrics.registry.metrics();
    assert.match(text, /^telemetry_gateway_delivery_latency_seconds_count 1000000$/m);
    assert.match(text, /^telemetry_gateway_delivery_latency_seconds_bucket\{le="0\.02"\} 1000000$/m);
  });

  it('reset() forgets the observations', async () => {
    const metrics = createMetrics();
    metrics.delivery_latency.observeMany(1, 3);
    metrics.registry.resetMetrics();
    assert.match(await metrics.registry.metrics(), /^telemetry_gateway_delivery_latency_seconds_count 0$/m);
  });
});

/** GET http://127.0.0.1:port<path>: {status, type, body}. */
function get(port, path, method = 'GET') {
  return new Promise((resolve, reject) => {
    http.request({ host: '127.0.0.1', port, path, method }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk) => { body += chunk; });
      response.on('end', () => resolve({ status: response.statusCode, type: response.headers['content-type'], body }));
    }).on('error', reject).end();
  });
}

describe('the /metrics endpoint', () => {
  it('HOST:PORT splits at its last colon; an empty host is every IPv4 interface', () => {
    assert.deepEqual(parseListen('127.0.0.1:9108'), { host: '127.0.0.1', port: 9108 });
    assert.deepEqual(parseListen(':9108'), { host: '0.0.0.0', port: 9108 });
    assert.deepEqual(parseListen('::1:9108'), { host: '::1', port: 9108 });
  });

  it('serves the registry at /metrics, 404 elsewhere', async () => {
    const metrics = used();
    const server = await startStatusServer('127.0.0.1:0', metrics.registry);
    try {
      const scraped = await get(server.port, '/metrics');
      assert.equal(scraped.status, 200);
      assert.equal(scraped.type, 'text/plain; version=0.0.4; charset=utf-8');
      assert.equal(scraped.body, await metrics.registry.metrics());
      assert.equal((await get(server.port, '/metrics?name[]=x')).status, 200);
      assert.equal((await get(server.port, '/')).status, 404); // without a status page
      assert.equal((await get(server.port, '/status.json')).status, 404);
      assert.equal((await get(server.port, '/metrics/x')).status, 404);
      assert.equal((await get(server.port, '/metrics', 'POST')).status, 405);
    } finally {
      await server.close();
    }
  });

  it('an empty host listens on every interface', async () => {
    const server = await startStatusServer(':0', createMetrics().registry);
    try {
      assert.equal((await get(server.port, '/metrics')).status, 200);
    } finally {
      await server.close();
    }
  });

  it('a port in use is a rejection that says where and why', async () => {
    const first = await startStatusServer('127.0.0.1:0', createMetrics().registry);
    try {
      await assert.rejects(startStatusServer(`127.0.0.1:${first.port}`, createMetrics().registry), (error) => {
        assert.match(error.message, new RegExp(`^cannot serve metrics on 127\\.0\\.0\\.1:${first.port}: .*EADDRINUSE`));
        assert.equal(error.code, 'EADDRINUSE');
        return true;
      });
    } finally {
      await first.close();
    }
  });

  it('close() does not wait for a keep-alive scraper', async () => {
    const server = await startStatusServer('127.0.0.1:0', createMetrics().registry);
    const agent = new http.Agent({ keepAlive: true });
    await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: server.port, path: '/metrics', agent }, (response) => {
        response.resume().on('end', resolve);
      }).on('error', reject);
    });
    await server.close(); // would hang until the agent's socket timed out
    agent.destroy();
  });
});
