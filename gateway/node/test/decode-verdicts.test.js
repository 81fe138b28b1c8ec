// decode's verdicts (src/decode-verdicts.js) and decode --port on a real pseudo-terminal (src/decode-port.js):
// gateway/contract/process.md, "decode". The signed lines were made with an independent HMAC-SHA256 under
// PROTOCOL.md section 8's example key (node3).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { decodeCommand } from '../src/decode-command.js';
import { DecodeJudge } from '../src/decode-verdicts.js';
import { decodeLine } from '../src/frame-decoder.js';
import { signingPolicy } from '../src/signing.js';
import { PtyBoard } from '../test-support/pty-board.js';
import { noPython } from '../test-support/python.js';

const BIN = fileURLToPath(new URL('../bin/telemetry-gateway-node', import.meta.url));
const KEY = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
const C5 = '$T2,node3,020301000500000000000001D700A5B332E635C7*9E73';
const C6 = '$T2,node3,020302000600000000000001D800DBA919C3AABB*F494';
const C6_FLIPPED = '$T2,node3,020302000600000000000001D800DBA919C3AABA*C4F7'; // the tag's last bit flipped
const C7 = '$T2,node3,020303000700000000000001D800CB8F8276C587*8E8F';
const UNSIGNED = '$T1,node3,3,temp=21.5*E488';
const OTHER_UNSIGNED = '$T1,room,1,temp=20*018B';
const BENCH = [C5, C6_FLIPPED, C5, UNSIGNED]; // good, a flipped tag, a replay, unsigned
const BENCH_VERDICTS = ['accepted', 'bad_mac', 'replay', 'unsigned'];

const verdicts = (judge, lines) => lines.map((line) => judge.judge(decodeLine(Buffer.from(line, 'latin1'))));

describe('verdicts', () => {
  it('a verdict per frame from the counters given', () => {
    const judge = new DecodeJudge(signingPolicy(new Map([['node3', KEY]])), new Map([['node3', 5]]));
    assert.deepEqual(verdicts(judge, [C5, C6_FLIPPED, C6, C6, C7, UNSIGNED, OTHER_UNSIGNED, '#boot', 'noise']),
      ['replay', 'bad_mac', 'accepted', 'replay', 'accepted', 'unsigned', 'unsigned', null, null]);
    assert.equal(judge.summary('/dev/ttyUSB0', 'gone'), 'port=/dev/ttyUSB0 lines=9 frames=7 accepted=2 bad_mac=1 '
      + 'replay=2 unsigned=2 unverified=0 status=1 rejected=1 end=gone');
  });

  it('a run starts with no counters and the config settings apply', () => {
    const judge = new DecodeJudge(signingPolicy(new Map([['node3', KEY]]), new Set(['room'])));
    assert.deepEqual(verdicts(judge, [...BENCH, OTHER_UNSIGNED]), [...BENCH_VERDICTS, 'accepted']);
    assert.deepEqual(verdicts(new DecodeJudge(signingPolicy(new Map([['room', KEY]]))), [C5, UNSIGNED]),
      ['bad_mac', 'unsigned']);
  });

  it('without keys no verdict, and frames are counted unverified', () => {
    const judge = new DecodeJudge(null);
    assert.deepEqual(verdicts(judge, BENCH), [null, null, null, null]);
    assert.equal(judge.counts.unverified, 4);
    assert.equal(judge.counts.accepted, 0);
  });
});

const sink = (append) => new Writable({ write(chunk, _encoding, done) { append(String(chunk)); done(); } });

async function runDecode(args, input = '') {
  let out = '';
  let err = '';
  const code = await decodeCommand(args, { stdin: Readable.from([Buffer.from(input, 'latin1')]),
    stdout: sink((text) => { out += text; }), stderr: sink((text) => { err += text; }) });
  return { code, out: out.split('\n').filter((line) => line !== ''), err };
}

const field = (text) => { const parsed = JSON.parse(text); return parsed.verdict ?? parsed.reason ?? null; };

describe('decode with keys and usage errors', () => {
  let dir;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'decode-verdicts-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function keysFile(mode = 0o600) {
    const path = join(dir, 'keys');
    writeFileSync(path, `node3 ${KEY.toString('hex')}\n`, { mode });
    return path;
  }

  it('stdin with keys gives each frame its verdict last', async () => {
    const { code, out, err } = await runDecode(['--keys', keysFile()], `${[...BENCH, '#boot'].join('\n')}\n`);
    assert.equal(code, 0);
    assert.equal(err, '');
    assert.deepEqual(out.map(field), [...BENCH_VERDICTS, null]);
    assert.equal(out[3], '{"kind":"frame","format":"v1","source":"node3","seq":3,"t":null,'
      + '"values":[["temp",21.5]],"verdict":"unsigned"}');
    const config = join(dir, 'config.toml');
    writeFileSync(config, `[signing]\nkeys_file = "${keysFile()}"\n[spool]\npath = "${dir}/spool.db"\n`);
    const viaConfig = await runDecode(['--config', config], `${C5}\n`);
    assert.equal(viaConfig.code, 0);
    assert.equal(JSON.parse(viaConfig.out[0]).verdict, 'accepted');
  });

  it('a keys file others may read is a config error', async () => {
    const { code, out, err } = await runDecode(['--keys', keysFile(0o644)], `${C5}\n`);
    assert.deepEqual([code, out], [2, []]);
    assert.ok(err.startsWith('telemetry-gateway-node: config error at signing.keys_file [unreadable]: '), err);
    assert.ok(!err.includes(KEY.toString('hex')));
  });

  for (const [args, word] of [[['--count', '2'], '--count'], [['--seconds', '1'], '--seconds'],
    [['--port', '/dev/null', '--count', '0'], '--count'], [['--port', 'x', '--count', '1.5'], '--count'],
    [['--port', '/dev/null', '--seconds', 'nan'], '--seconds'], [['--bogus'], '--bogus']]) {
    it(`a usage error names ${word} (${args.join(' ')})`, async () => {
      const { code, err } = await runDecode(args);
      assert.equal(code, 2);
      assert.ok(err.includes(word), err);
    });
  }
});

describe('decode --port on a pseudo-terminal', { skip: noPython('it holds the ptys') }, () => {
  let dir;
  let link;
  let board;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'decode-port-'));
    link = join(dir, 'ttyUSB0');
    board = new PtyBoard(link);
    await board.plug();
  });
  afterEach(async () => {
    await board.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads until the port goes away, keeping what the kernel held', async () => {
    const keys = join(dir, 'keys');
    writeFileSync(keys, `node3 ${KEY.toString('hex')}\n`, { mode: 0o600 });
    await board.write(`${C5}\r\n`); // sent before decode opens the port: kept, not flushed
    const running = runDecode(['--port', `${link}@9600`, '--keys', keys]);
    await new Promise((resolve) => { setTimeout(resolve, 300); });
    await board.write(`${BENCH.slice(1).join('\r\n')}\r\n${'x'.repeat(300)}\nhalf a li`);
    await new Promise((resolve) => { setTimeout(resolve, 300); });
    await board.unplug();
    const { code, out, err } = await running;
    assert.equal(code, 0);
    assert.deepEqual(out.map(field), [...BENCH_VERDICTS, 'too_long', 'partial_line']);
    assert.equal(err, `telemetry-gateway-node decode: port=${link} lines=6 frames=4 accepted=1 bad_mac=1 replay=1 `
      + 'unsigned=1 unverified=0 status=0 rejected=2 end=gone\n');
    assert.deepEqual(readdirSync(dir).sort(), ['keys']); // nothing written (the link went with the unplug)
  });

  it('--count ends at that many lines, --seconds ends a silent port, a missing port exits 1', async () => {
    await board.write(`${BENCH.join('\n')}\n`);
    const counted = await runDecode(['--port', link, '--count', '3']);
    assert.equal(counted.code, 0);
    assert.equal(counted.out.length, 3);
    assert.ok(!counted.out[0].includes('verdict'));
    assert.ok(counted.err.endsWith(' lines=3 frames=3 accepted=0 bad_mac=0 replay=0 unsigned=0 unverified=3 '
      + 'status=0 rejected=0 end=count\n'), counted.err);
    const started = performance.now();
    const timed = await runDecode(['--port', link, '--seconds', '0.3']);
    const elapsed = performance.now() - started;
    assert.equal(timed.code, 0);
    assert.ok(timed.err.endsWith(' end=seconds\n'), timed.err);
    assert.ok(elapsed >= 290 && elapsed < 3000, String(elapsed));
    const missing = await runDecode(['--port', join(dir, 'ttyUSB9')]);
    assert.deepEqual([missing.code, missing.out], [1, []]);
    assert.ok(missing.err.startsWith(`telemetry-gateway-node decode: --port: cannot open ${dir}/ttyUSB9: `));
  });

  for (const signal of ['SIGTERM', 'SIGINT']) {
    it(`${signal} ends the reading with the summary and exit 0`, async () => {
      const child = spawn(BIN, ['decode', '--port', link], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr.on('data', (chunk) => { err += chunk; });
      const lines = createInterface({ input: child.stdout });
      const first = new Promise((resolve) => { lines.once('line', resolve); });
      await board.write(`${C5}\n`);
      assert.equal(JSON.parse(await first).counter, 5); // read and printed at once, not held in a buffer
      child.kill(signal);
      const [code] = await once(child, 'exit');
      assert.equal(code, 0);
      assert.ok(err.endsWith(' lines=1 frames=1 accepted=0 bad_mac=0 replay=0 unsigned=0 unverified=1 status=0 '
        + 'rejected=0 end=signal\n'), err);
      assert.deepEqual(readdirSync(dir).filter((name) => name !== 'ttyUSB0'), []);
    });
  }
});
