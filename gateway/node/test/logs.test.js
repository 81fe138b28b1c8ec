// Operator log lines read exactly as the Python gateway's (telemetry_gateway/logs.py): the same line format, the
// same quoting and escaping of field values (checked against the Python implementation itself when the project's
// venv is there), the same rate limiting.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';

import {
  RateLimitedLog, asctime, event, field, pythonAscii, pythonStr, setupLogging,
} from '../src/logs.js';
import { PYTHON, noPython } from '../test-support/python.js';

const NO_PYTHON = noPython('the Python gateway to compare with');

/** Runs Python code with `input` as JSON on stdin; its stdout parsed as JSON. */
function python(code, input) {
  const result = spawnSync(PYTHON, ['-c', code], { input: JSON.stringify(input), encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout);
}

/** Collects the lines written to it. */
function memoryStream() {
  const lines = [];
  return { lines, write: (text) => { lines.push(text); } };
}

// Order matters here: this runs before any setupLogging() of this process.
it('before setupLogging, only warnings and worse are written, as the bare message (Python\'s last resort)', () => {
  const written = [];
  const write = process.stderr.write;
  process.stderr.write = (text) => { written.push(text); return true; };
  try {
    event('info', 'quiet', { a: 1 });
    event('warning', 'loud', { a: 1 });
  } finally {
    process.stderr.write = write;
  }
  assert.deepEqual(written, ['event=loud a=1\n']);
});

const TRICKY = [
  '', 'bad_crc', '/dev/ttyUSB0', 'two words', 'a=b', "it's", 'say "hi"', `both ' and "`, 'back\\slash',
  "quote' and back\\slash", 'tab\there', 'new\nline', 'cr\rlf\n', '\x00\x01\x1b[2J\x07', '\x7f', '\x80\x9b\xa0\xff',
  'é', 'caf\u00e9 \u2028 \u200b', '\ufeff\uffff', '\u{1f600}', 'x\u{10ffff}', '\ud800 lone', 'lone \udfff',
  '\x1b]0;pwned\x07$T1,G,1,a=1*\xff\xfe\x00', ' ', '=', '"', "'", '\\', '~!@#$%^&*()_+`-[]{}|;:,.<>/?',
];

describe('field values', () => {
  it('plain values stay plain', () => {
    assert.equal(field('bad_crc'), 'bad_crc');
    assert.equal(field(42), '42');
    assert.equal(field('/dev/ttyUSB0'), '/dev/ttyUSB0');
    assert.equal(field('back\\slash'), 'back\\slash');
  });

  it('spaces, quotes, = and empty values are quoted as Python repr()s them', () => {
    assert.equal(field('two words'), "'two words'");
    assert.equal(field('a=b'), "'a=b'");
    assert.equal(field(''), "''");
    assert.equal(field("it's"), `"it's"`);
    assert.equal(field(`both ' and "`), `'both \\' and "'`);
  });

  it('control and non-ASCII characters are escaped, by code point', () => {
    assert.equal(pythonAscii('\x1b[2J\x00\r\n\t\x7f'), "'\\x1b[2J\\x00\\r\\n\\t\\x7f'");
    assert.equal(pythonAscii('\x9b\xff\u2028\u{1f600}'), "'\\x9b\\xff\\u2028\\U0001f600'");
    assert.equal(pythonAscii('\ud800'), "'\\ud800'");
  });

  it('values that are not strings render as Python str() does', () => {
    assert.deepEqual([true, false, null, undefined, 3, -0, 0.5, 1e-5, 1.5e-7, 0.0001, 2 ** 70, NaN, -Infinity]
      .map(pythonStr), ['True', 'False', 'None', 'None', '3', '0', '0.5', '1e-05', '1.5e-07', '0.0001',
      '1180591620717411303424', 'nan', '-inf']);
  });

  it('every tricky string and value is written exactly as the Python gateway writes it', { skip: NO_PYTHON }, () => {
    const values = [...TRICKY, 0, 42, -7, 0.5, 1e-5, 2.5e-9, 123.456, 0.1 + 0.2, true, false, null];
    const theirs = python(`
import json, sys
from telemetry_gateway.logs import _field
print(json.dumps([_field(v) for v in json.load(sys.stdin)]))`, values);
    assert.deepEqual(values.map(field), theirs);
  });
});

describe('lines', () => {
  it('asctime is local time as YYYY-MM-DD HH:MM:SS,mmm', () => {
    assert.equal(asctime(new Date(2024, 0, 2, 3, 4, 5, 6)), '2024-01-02 03:04:05,006');
    assert.equal(asctime(new Date(1999, 11, 31, 23, 59, 59, 999)), '1999-12-31 23:59:59,999');
  });

  it('asctime matches Python logging\'s for the same instants', { skip: NO_PYTHON }, () => {
    const instants = [0, 1_700_000_000_123, 1_719_000_000_999, 1_735_689_599_001];
    const theirs = python(`
import json, logging, sys
formatter = logging.Formatter()
records = [logging.makeLogRecord({"created": ms / 1000, "msecs": ms % 1000}) for ms in json.load(sys.stdin)]
print(json.dumps([formatter.formatTime(r) for r in records]))`, instants);
    assert.deepEqual(instants.map((ms) => asctime(new Date(ms))), theirs);
  });

  it('a line is "<asctime> level=<LEVEL> event=<name> k=v ..." at or above the level set', () => {
    const stream = memoryStream();
    setupLogging('INFO', stream); // any case
    event('debug', 'hidden', {});
    event('info', 'serial_open', { port: '/dev/ttyUSB0', baud: 115200 });
    event('warning', 'line_rejected', { input: '-', reason: 'bad_crc', line: '$T1,G,1 *\xff' });
    event('error', 'fatal', {});
    assert.equal(stream.lines.length, 3);
    const [open, rejected, fatal] = stream.lines;
    assert.match(open, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} level=INFO event=serial_open port=\/dev\/ttyUSB0 baud=115200\n$/);
    assert.ok(rejected.endsWith(" level=WARNING event=line_rejected input=- reason=bad_crc line='$T1,G,1 *\\xff'\n"));
    assert.ok(fatal.endsWith(' level=ERROR event=fatal\n'));
  });

  it('the same events make the same lines as Python\'s, but for the time', { skip: NO_PYTHON }, () => {
    const events = [
      ['info', 'gateway_started', { inputs: 2, spool: '/var/lib/telemetry-gateway/spool.sqlite', fsync: 'batch',
        metrics: '127.0.0.1:9108' }],
      ['warning', 'write_failed', { error: 'timeout', detail: 'OperationTimedOut: errors={}, last_host=10.0.0.1:9042',
        attempts: 3, action: 'retrying with backoff' }],
      ['error', 'spool_full', { kind: 'disk', spooled_frames: 0, action: 'reading paused; free disk space' }],
      ['debug', 'hidden', { a: 1 }],
      ['info', 'inputs_done_and_spool_drained', {}],
    ];
    const stream = memoryStream();
    setupLogging('info', stream);
    for (const [level, name, fields] of events) event(level, name, fields);
    const result = spawnSync(PYTHON, ['-c', `
import json, logging, sys
from telemetry_gateway.logs import event, setup_logging
setup_logging("info")
for level, name, fields in json.load(sys.stdin):
    event(getattr(logging, level.upper()), name, **fields)`], { input: JSON.stringify(events), encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    const withoutTime = (line) => line.replace(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} /, '<time> ');
    assert.deepEqual(stream.lines.join('').split('\n').map(withoutTime), result.stderr.split('\n').map(withoutTime));
  });

  it('levels are debug, info, warning, error, critical; others are refused', () => {
    assert.throws(() => setupLogging('verbose', memoryStream()), /Unknown level: 'VERBOSE'/);
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

  it('keys are bounded (Python test_rate_limited_log_keys_are_bounded)', () => {
    const stream = memoryStream();
    setupLogging('info', stream);
    let now = 1000;
    const limited = new RateLimitedLog({ intervalS: 10, maxSlots: 100, now: () => now });
    for (let i = 0; i < 5000; i++) limited.event('info', 'seq_gap', { key: `junk${i}`, source: `junk${i}` });
    assert.ok(limited.last.size <= 101); // the bound, plus the shared slot for the rest
    assert.equal(stream.lines.length, 101); // one line each for the first 100 keys, one for all the others
    now += 11; // every slot's interval is over: the table is cleared for new keys
    limited.event('info', 'seq_gap', { key: 'G', source: 'G' });
    assert.equal(limited.last.size, 1);
    assert.ok(stream.lines.at(-1).endsWith(' level=INFO event=seq_gap source=G\n'));
  });
});
