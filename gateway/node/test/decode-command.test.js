// telemetry-gateway-node decode (src/decode-command.js): one JSON result per input line, the protocol vectors'
// `expect`, in the exact text of the contract's vectors (gateway/contract/vectors/decode_text.jsonl); the
// differential fuzz test (gateway/conformance/test_decoder_differential.py) runs both gateways.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Readable, Writable } from 'node:stream';

import { decodeCommand, LfLines, portFrom } from '../src/decode-command.js';
import { contractVectors, latin1, protocolVectors } from '../test-support/vectors.js';

const TEXT_CASES = contractVectors('decode_text.jsonl');
const csvArgs = ({ csv, source, columns }) => (csv ? ['--csv', '--source', source, '--columns', columns] : []);

/** Runs the command on `chunks` (Buffers, read one by one); resolves to {code, out: [lines], err}. */
async function decode(chunks, args = []) {
  let out = '';
  let err = '';
  const sink = (append) => new Writable({ write(chunk, _encoding, done) { append(String(chunk)); done(); } });
  const code = await decodeCommand(args, {
    stdin: Readable.from(chunks),
    stdout: sink((text) => { out += text; }),
    stderr: sink((text) => { err += text; }),
  });
  return { code, out: out.split('\n').filter((line, i, all) => i < all.length - 1 || line !== ''), err };
}

/** Node's parse of a result, the sign of zero kept: JSON.parse reads -0.0 as -0. */
const parsed = (text) => JSON.parse(text);
const stdinLine = (line) => (line.endsWith('\n') ? line : `${line}\n`);

describe('the protocol vectors through decode', () => {
  it('decode.json, one line each', async () => {
    const { cases } = protocolVectors('decode.json');
    const { code, out } = await decode([latin1(cases.map((c) => stdinLine(c.line)).join(''))]);
    assert.equal(code, 0);
    assert.equal(out.length, cases.length);
    cases.forEach((c, i) => assert.deepStrictEqual(parsed(out[i]), c.expect, c.name)); // Object.is: -0 too
  });

  it('room_csv.json with --csv', async () => {
    const doc = protocolVectors('room_csv.json');
    for (const c of doc.cases) {
      const args = ['--csv', '--source', doc.source, '--columns', (c.columns ?? doc.columns).join(',')];
      const { code, out } = await decode([latin1(stdinLine(c.line))], args);
      assert.equal(code, 0);
      assert.deepStrictEqual(out.map(parsed), [c.expect], c.name);
    }
  });
});

describe('decode_text.jsonl: the exact output text', () => {
  for (const c of TEXT_CASES) {
    it(c.name, async () => {
      const args = csvArgs(c.params);
      let dir = null;
      if (c.params.keys) { // --keys: a keys file of mode 0600
        dir = mkdtempSync(join(tmpdir(), 'decode-keys-'));
        writeFileSync(join(dir, 'keys'), Object.entries(c.params.keys).map(([s, key]) => `${s} ${key}\n`).join(''),
          { mode: 0o600 });
        args.push('--keys', join(dir, 'keys'));
      }
      try {
        assert.deepStrictEqual(await decode([latin1(c.input)], args), { code: 0, out: c.expect, err: '' });
      } finally {
        if (dir !== null) rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('lines', () => {
  it('each LF ends one line; a CR elsewhere stays in it', async () => {
    const { code, out } = await decode([Buffer.from('#a\r\n\n#b\rc\r\n#d\r\r\n \r\n#last\r')]);
    assert.equal(code, 0);
    assert.deepStrictEqual(out.map(parsed), [
      { kind: 'status', text: 'a' }, // CRLF: the CR belongs to the ending
      { kind: 'reject', reason: 'empty' }, // an empty line is a line here
      { kind: 'status', text: 'b\rc' }, // a CR inside the line: not an ending (the assembler would split)
      { kind: 'status', text: 'd' }, // the command drops one CR, the decoder (step 1) the other
      { kind: 'reject', reason: 'empty' },
      { kind: 'status', text: 'last' }, // no LF at the end: still a line
    ]);
    assert.deepStrictEqual((await decode([])).out, []);
    assert.deepStrictEqual((await decode([Buffer.from('#x\n')])).out, ['{"kind":"status","text":"x"}']);
  });

  it('lines split across chunks anywhere, a CRLF too', async () => {
    const data = Buffer.from('#one\r\n#two\n\n#three\r\n');
    const whole = (await decode([data])).out;
    for (let at = 0; at <= data.length; at++) {
      assert.deepStrictEqual((await decode([data.subarray(0, at), data.subarray(at)])).out, whole, `split at ${at}`);
    }
    const bytes = [...data].map((byte) => Buffer.from([byte]));
    assert.deepStrictEqual((await decode(bytes)).out, whole);
  });

  it('LfLines keeps the bytes as they are', () => {
    const lines = new LfLines();
    assert.deepStrictEqual(lines.feed(Buffer.from([0x00, 0xff, 0x0d, 0x0d, 0x0a, 0x80])),
      [Buffer.from([0x00, 0xff, 0x0d])]);
    assert.deepStrictEqual(lines.end(), [Buffer.from([0x80])]);
    assert.deepStrictEqual(lines.end(), []);
  });

});

describe('arguments', () => {
  const USAGE_ERRORS = [
    [['--source', 'room'], '--source: only a --csv port has source'],
    [['--columns', 'a'], '--columns: only a --csv port has columns'],
    [['--csv', '--columns', 'a'], '--source: a csv port needs the source its lines are stored under'],
    [['--csv', '--source', 'bad source', '--columns', 'a'],
      '--source: "bad source" is not a source name ([A-Za-z0-9_-]{1,32})'],
    [['--csv', '--source', 'room'], '--columns: a csv port needs the metric name of each field'],
    [['--csv', '--source', 'room', '--columns', 'light,t'],
      '--columns: "t" is not a metric name ([a-z][a-z0-9_]{0,15}, not t)'],
    [['--csv', '--source', 'room', '--columns', 'light,'],
      '--columns: "" is not a metric name ([a-z][a-z0-9_]{0,15}, not t)'],
    [['--csv', '--source', 'room', '--columns', 'a,b,a'], '--columns: "a" is listed twice'],
  ];
  for (const [args, message] of USAGE_ERRORS) {
    it(`${args.join(' ')}: exit 2`, async () => {
      const { code, out, err } = await decode([Buffer.from('57,21.5\n')], args);
      assert.deepStrictEqual({ code, out, err },
        { code: 2, out: [], err: `telemetry-gateway-node decode: ${message}\n` });
    });
  }

  it('unknown options and --help', async () => {
    const bogus = await decode([], ['--bogus']);
    assert.equal(bogus.code, 2);
    assert.match(bogus.err, /Unknown option '--bogus'/);
    const help = await decode([], ['--help']);
    assert.equal(help.code, 0);
    assert.match(help.out.join('\n'), /^Usage: telemetry-gateway-node decode/);
  });

  it('portFrom: the port of the decoder', () => {
    assert.deepStrictEqual(portFrom({}), { port: { path: '-', format: 'auto' } });
    assert.deepStrictEqual(portFrom({ csv: true, source: 'room', columns: ' light ,temp' }),
      { port: { path: '-', format: 'csv', source: 'room', columns: ['light', 'temp'] } });
    assert.equal(portFrom({ csv: true, source: "it's", columns: 'a' }).error,
      '--source: "it\'s" is not a source name ([A-Za-z0-9_-]{1,32})');
  });
});

it('as a process on stdin and stdout', () => {
  const script = `import(${JSON.stringify(new URL('../src/decode-command.js', import.meta.url).href)})`
    + '.then(m => m.decodeCommand(process.argv.slice(1))).then(c => process.exit(c))';
  const whole = TEXT_CASES.filter((c) => !c.params.csv && !c.params.keys && c.input.endsWith('\n'));
  const input = latin1(whole.map((c) => c.input).join('').repeat(1000));
  const done = spawnSync(process.execPath, ['-e', script, '--'], { input, timeout: 60_000 });
  assert.equal(done.status, 0, String(done.stderr));
  assert.deepStrictEqual(done.stdout.toString('ascii').split('\n').slice(0, -1),
    Array(1000).fill(whole.flatMap((c) => c.expect)).flat());
});
