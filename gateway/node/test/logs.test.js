// Operator log lines (gateway/contract/logs.md): the line format, the field values of the contract's vectors
// (vectors/log_fields.jsonl), the rate limiting.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { RateLimitedLog, event, message, setupLogging } from '../src/logs.js';
import { RateLimit } from '../src/rate-limit.js';
import { fieldText } from '../src/text-forms.js';
import { contractVectors } from '../test-support/vectors.js';

/** Collects the lines written to it. */
function memoryStream() {
  const lines = [];
  return { lines, write: (text) => { lines.push(text); } };
}

// Order matters here: this runs before any setupLogging() of this process.
it('before setupLogging, warnings and worse are written to stderr, in the one line format', () => {
  const written = [];
  const write = process.stderr.write;
  process.stderr.write = (text) => { written.push(text); return true; };
  try {
    event('info', 'quiet', { a: 1 });
    event('warning', 'loud', { a: 1 });
  } finally {
    process.stderr.write = write;
  }
  assert.equal(written.length, 1);
  assert.match(written[0], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=WARNING event=loud a=1\n$/);
});

describe('log_fields.jsonl', () => {
  for (const c of contractVectors('log_fields.jsonl')) {
    it(c.name, () => {
      assert.equal(fieldText(c.value), c.expect);
      assert.equal(message('e', { k: c.value }), c.expect === null ? 'event=e' : `event=e k=${c.expect}`);
    });
  }
});

it('every event this gateway logs is in the contract (logs.md\'s table)', () => {
  const table = new Set([...readFileSync(new URL('../../contract/logs.md', import.meta.url), 'utf8')
    .matchAll(/^\| `([a-z0-9_]+)` \|/gm)].map((m) => m[1]));
  const src = new URL('../src/', import.meta.url);
  const logged = new Set();
  for (const name of readdirSync(src, { recursive: true }).filter((file) => file.endsWith('.js'))) {
    const text = readFileSync(new URL(name, src), 'utf8');
    for (const m of text.matchAll(/\bevent\(\s*[^,]+,\s*'([a-z0-9_]+)'/g)) logged.add(m[1]);
  }
  assert.ok(logged.size > 20, [...logged].join());
  assert.deepEqual([...logged].filter((name) => !table.has(name)), []);
});

describe('lines', () => {
  it('a line is "<UTC time>Z level=<LEVEL> event=<name> k=v ..." at or above the level set', () => {
    const stream = memoryStream();
    setupLogging('INFO', stream); // any case
    event('debug', 'hidden', {});
    event('info', 'serial_open', { port: '/dev/ttyUSB0', baud: 115200 });
    event('warning', 'line_rejected', { input: '-', reason: 'bad_crc', line: '$T1,G,1 *\xff' });
    event('error', 'fatal', {});
    assert.equal(stream.lines.length, 3);
    const [open, rejected, fatal] = stream.lines;
    assert.match(open, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=INFO event=serial_open port=\/dev\/ttyUSB0 /);
    assert.ok(open.endsWith(' baud=115200\n'));
    assert.ok(rejected.endsWith(' level=WARNING event=line_rejected input=- reason=bad_crc line="$T1,G,1 *\\u00ff"\n'));
    assert.ok(fatal.endsWith(' level=ERROR event=fatal\n'));
  });

  it('levels are debug, info, warning, error, critical; others are refused', () => {
    assert.throws(() => setupLogging('verbose', memoryStream()), /Unknown level: verbose/);
    assert.throws(() => event('loud', 'x', {}), /Unknown level/);
  });
});

describe('RateLimitedLog', () => {
  it('one line per key per interval; the next says how many were held back; key itself is not logged', () => {
    const stream = memoryStream();
    setupLogging('info', stream);
    let now = 1000;
    const limited = new RateLimitedLog({ intervalS: 10, now: () => now });
    const gap = (source, seq) => limited.event('info', 'seq_gap', { key: source, source, missing: 1, seq });
    gap('A', 1);
    gap('B', 1); // another key: its own slot
    now += 5;
    gap('A', 2);
    gap('A', 3);
    now += 5; // A's interval is over
    gap('A', 4);
    now += 10;
    gap('A', 5);
    const lines = stream.lines.map((line) => line.slice(line.indexOf(' event=') + 1, -1));
    assert.deepEqual(lines, [
      'event=seq_gap source=A missing=1 seq=1',
      'event=seq_gap source=B missing=1 seq=1',
      'event=seq_gap source=A missing=1 seq=4 suppressed=2',
      'event=seq_gap source=A missing=1 seq=5',
    ]);
  });

  it('the caller\'s fields are left as they were', () => {
    setupLogging('info', memoryStream());
    let now = 0;
    const limited = new RateLimitedLog({ now: () => now });
    const fields = { key: 'k', a: 1 };
    limited.event('info', 'x', fields);
    limited.event('info', 'x', fields);
    now += 11;
    limited.event('info', 'x', fields);
    assert.deepEqual(fields, { key: 'k', a: 1 });
  });

  it('keys are bounded', () => {
    const stream = memoryStream();
    setupLogging('info', stream);
    let now = 1000;
    const limited = new RateLimitedLog({ intervalS: 10, maxSlots: 100, now: () => now });
    for (let i = 0; i < 5000; i++) limited.event('info', 'seq_gap', { key: `junk${i}`, source: `junk${i}` });
    assert.equal(limited.limit.remembered('seq_gap'), 100); // the bound; the shared key `*` for the rest
    assert.equal(stream.lines.length, 101); // one line each for the first 100 keys, one for all the others
    now += 11; // every key's interval is over: a new key takes the oldest one's place
    limited.event('info', 'seq_gap', { key: 'G', source: 'G' });
    assert.equal(limited.limit.remembered('seq_gap'), 100);
    assert.ok(stream.lines.at(-1).endsWith(' level=INFO event=seq_gap source=G\n'));
  });
});

describe('log_rate_limit.jsonl', () => {
  for (const c of contractVectors('log_rate_limit.jsonl')) {
    it(c.name, () => {
      const limit = new RateLimit(c.params.interval_ms, c.params.max_keys);
      for (const step of c.steps) {
        const held = limit.admit(step.at_ms, step.event, step.key);
        const got = held === null ? { written: false } : { written: true, suppressed: held };
        assert.deepEqual(got, step.expect, `at ${step.at_ms}: ${step.event} ${step.key}`);
      }
    });
  }
});
