// The inputs (credits.js, line-handler.js, serial-input.js, stream-input.js, backoff.js): credits, the retry schedule, a LineHandler turning
// reads into lines and decoded frames handed to the ingest with their credits; SerialInput on real pseudo-terminals;
// StreamInput on files and stdin.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';

import { backoffS } from '../src/backoff.js';
import { crc16CcittFalse } from '../src/crc16.js';
import { Credits, SERIAL_CREDITS, STREAM_CREDITS } from '../src/credits.js';
import { LineHandler, READ_CHUNK } from '../src/line-handler.js';
import { setupLogging } from '../src/logs.js';
import { createMetrics } from '../src/metrics.js';
import { lineDecoder } from '../src/room-csv.js';
import { SerialInput } from '../src/serial-input.js';
import { StreamInput } from '../src/stream-input.js';
import { PtyBoard } from '../test-support/pty-board.js';
import { noPython } from '../test-support/python.js';

/** A v1 frame line as a board prints it. */
function frameLine(source, seq, values) {
  const body = `T1,${source},${seq},${Object.entries(values).map(([k, v]) => `${k}=${v}`).join(',')}`;
  return `$${body}*${crc16CcittFalse(body).toString(16).toUpperCase().padStart(4, '0')}\r\n`;
}

/** The ingest's side of a hand-over: keeps what it is given; gives credits back only when told. */
function fakeIngest() {
  return {
    received: [], // every hand-over
    held: [], // those whose credit was not given back yet
    put(received) {
      this.received.push(received);
      this.held.push(received);
    },
    get frames() { return this.received.flatMap((r) => r.frames); },
    releaseAll() {
      for (const r of this.held.splice(0)) r.credits.release();
    },
  };
}

/** A metric's value for labels (0 when never set). */
async function valueOf(metric, labels = {}) {
  const { values } = await metric.get();
  const found = values.find((v) => JSON.stringify(v.labels) === JSON.stringify(labels));
  return found ? found.value : 0;
}

/** Log lines written while the test runs (setupLogging to memory). */
function captureLogs() {
  const lines = [];
  setupLogging('info', { write: (text) => { lines.push(text); } });
  return lines;
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

async function waitFor(condition, what, timeoutMs = 3000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (performance.now() > deadline) assert.fail(`waited ${timeoutMs} ms for ${what}`);
    await sleep(5);
  }
}

describe('Credits', () => {
  it('take() succeeds while credits are left, release() gives one back', () => {
    const credits = new Credits(2);
    assert.equal(credits.take(), true);
    assert.equal(credits.take(), true);
    assert.equal(credits.available, 0);
    assert.equal(credits.take(), false);
    assert.equal(credits.available, 0);
    credits.release();
    assert.equal(credits.available, 1);
    assert.equal(credits.take(), true);
  });

  it('onAvailable is called when the count goes from 0 to 1, not otherwise', () => {
    let calls = 0;
    const credits = new Credits(1, () => { calls += 1; });
    credits.release(); // 1 -> 2
    assert.equal(calls, 0);
    credits.take();
    credits.take();
    credits.release(); // 0 -> 1
    assert.equal(calls, 1);
    credits.release(); // 1 -> 2
    assert.equal(calls, 1);
  });

  it('onAvailable may be set after construction (an input sets it)', () => {
    const credits = new Credits(0);
    let called = false;
    credits.onAvailable = () => { called = true; };
    credits.release();
    assert.equal(called, true);
  });

  it('serial ports hold 2, files and stdin 32 (Python: SERIAL_CREDITS, STREAM_CREDITS)', () => {
    assert.equal(SERIAL_CREDITS, 2);
    assert.equal(STREAM_CREDITS, 32);
  });
});

describe('backoffS', () => {
  it('doubles from 0.2 s and stops at maxS', () => {
    assert.deepEqual([1, 2, 3, 4].map((n) => backoffS(n, 60)), [0.2, 0.4, 0.8, 1.6]);
    assert.equal(backoffS(5, 0.5), 0.5);
    assert.equal(backoffS(0, 60), 0.1);
  });

  it('stops doubling after 10 attempts (0.1 * 2**10 = 102.4 s), whatever maxS', () => {
    assert.equal(backoffS(10, 1000), 102.4);
    assert.equal(backoffS(50, 1000), 102.4);
    assert.equal(backoffS(1e6, 1000), 102.4); // no overflow to Infinity
  });
});

describe('LineHandler', () => {
  let logs;
  let metrics;
  let ingest;
  beforeEach(() => {
    logs = captureLogs();
    metrics = createMetrics();
    ingest = fakeIngest();
  });
  const handler = (...rest) => new LineHandler('/dev/ttyUSB0', ingest, metrics, ...rest);
  const input = { input: '/dev/ttyUSB0' };

  it('a count of credits makes Credits; Credits are taken as they are; 2 by default', () => {
    assert.equal(handler().credits.available, 2);
    assert.equal(handler(32).credits.available, 32);
    const credits = new Credits(5);
    assert.equal(handler(credits).credits, credits);
  });

  it('hands one read\'s frames over together, with its credits and the time of the read', () => {
    const h = handler();
    const before = Date.now();
    const taken = h.feed(Buffer.from(frameLine('G', 1, { a: 1 }) + frameLine('G', 2, { a: 2 })));
    assert.equal(taken, true);
    assert.equal(ingest.received.length, 1);
    const [received] = ingest.received;
    assert.equal(received.credits, h.credits);
    assert.deepEqual(received.frames.map((f) => f.seq), [1, 2]);
    assert.ok(received.receivedMs >= before && received.receivedMs <= Date.now());
  });

  it('a line split across reads arrives whole, in the read that ends it', async () => {
    const h = handler();
    const line = frameLine('G', 7, { temp: 21.5 });
    assert.equal(h.feed(Buffer.from(line.slice(0, 10))), false); // no line yet: the caller keeps the credit
    assert.equal(h.feed(Buffer.from(line.slice(10, 20))), false);
    assert.equal(h.feed(Buffer.from(line.slice(20))), true);
    assert.deepEqual(ingest.frames.map((f) => [f.source, f.seq, f.values]), [['G', 7, [['temp', 21.5]]]]);
    assert.equal(await valueOf(metrics.lines_read, input), 1);
  });

  it('rejects are counted by reason and logged with the line (latin-1, 80 bytes at most); no hand-over', async () => {
    const h = handler();
    const noise = Buffer.concat([Buffer.from('\x1b[2J garbage '), Buffer.from([0xff]), Buffer.from('x'.repeat(100))]);
    assert.equal(h.feed(Buffer.concat([noise, Buffer.from('\n$T1,G,1,a=1*0000\n')])), false);
    assert.equal(ingest.received.length, 0);
    assert.equal(await valueOf(metrics.rejects, { reason: 'no_frame' }), 1);
    assert.equal(await valueOf(metrics.rejects, { reason: 'bad_crc' }), 1);
    assert.equal(await valueOf(metrics.lines_read, input), 2);
    const rejected = logs.filter((l) => l.includes('event=line_rejected'));
    assert.equal(rejected.length, 2);
    assert.match(rejected[0],
      / level=WARNING event=line_rejected input=\/dev\/ttyUSB0 reason=no_frame line="\\u001b\[2J garbage \\u00ffx+"\n$/);
    assert.equal(rejected[0].match(/(x+)"\n$/)[1].length, 80 - 14); // 80 bytes: 14 before the x's
    assert.match(rejected[1], /reason=bad_crc line="\$T1,G,1,a=1\*0000"/);
  });

  it('a rejected line is logged once per input and reason per 10 s', () => {
    const h = handler();
    h.feed(Buffer.from('one\ntwo\nthree\n'));
    assert.equal(logs.filter((l) => l.includes('reason=no_frame')).length, 1);
  });

  it('status lines are counted and logged, and are not frames', async () => {
    const h = handler();
    assert.equal(h.feed(Buffer.from('# radio ok \r\n')), false);
    assert.equal(await valueOf(metrics.status_lines, input), 1);
    assert.equal(await valueOf(metrics.lines_read, input), 1);
    assert.match(logs.join(''), /level=INFO event=status_line input=\/dev\/ttyUSB0 text="radio ok"\n/);
  });

  it('an over-long line is too_long and counted as a line read', async () => {
    const h = handler();
    assert.equal(h.feed(Buffer.from(`${'x'.repeat(300)}\n${frameLine('G', 1, { a: 1 })}`)), true);
    assert.equal(await valueOf(metrics.rejects, { reason: 'too_long' }), 1);
    assert.equal(await valueOf(metrics.lines_read, input), 2);
    assert.match(logs.join(''), /event=line_rejected input=\/dev\/ttyUSB0 reason=too_long line=""\n/);
  });

  it('restart() (the port was reopened) counts a partial line as partial_line, if any', async () => {
    const h = handler();
    h.restart();
    assert.equal(await valueOf(metrics.rejects, { reason: 'partial_line' }), 0);
    h.feed(Buffer.from('$T1,G,1,a='));
    h.restart();
    assert.equal(await valueOf(metrics.rejects, { reason: 'partial_line' }), 1);
    assert.equal(await valueOf(metrics.lines_read, input), 1);
    h.feed(Buffer.from('1*ABCD\n')); // the rest of the old line, after the reopen: a line of its own
    assert.equal(await valueOf(metrics.rejects, { reason: 'no_frame' }), 1);
  });

  it('finish() hands over a last line without its newline, with no credit taken', async () => {
    const h = handler(new Credits(0));
    const line = frameLine('G', 3, { a: 3 }).trimEnd();
    h.feed(Buffer.from(line));
    h.finish();
    assert.deepEqual(ingest.frames.map((f) => f.seq), [3]);
    assert.equal(h.credits.available, 0);
    assert.equal(await valueOf(metrics.lines_read, input), 1);
  });

  it('a CSV port\'s decoder (room-csv.js lineDecoder) decodes its lines', () => {
    const decode = lineDecoder({ format: 'csv', source: 'room', columns: ['light', 'temp'] });
    const h = new LineHandler('/dev/ttyACM0', ingest, metrics, SERIAL_CREDITS, decode);
    assert.equal(h.feed(Buffer.from('512,21.50\r\n')), true);
    assert.deepEqual(ingest.frames, [{ kind: 'frame', format: 'csv', source: 'room', seq: null, t: null,
      values: [['light', 512], ['temp', 21.5]] }]);
  });

  it('keeps no reference to the read\'s buffer: the reader may reuse it', () => {
    const h = handler();
    const buffer = Buffer.from(`${frameLine('G', 1, { a: 1 })}$T1,G,2`);
    h.feed(buffer);
    buffer.fill(0x20);
    h.feed(Buffer.from(`,a=2*${crc16CcittFalse('T1,G,2,a=2').toString(16).toUpperCase().padStart(4, '0')}\n`));
    assert.deepEqual(ingest.frames.map((f) => [f.seq, f.values]), [[1, [['a', 1]]], [2, [['a', 2]]]]);
  });
});

// --- SerialInput on pseudo-terminals, held by a Python helper as the conformance harness's Board does (os.openpty,
// the slave's path linked at the test's path, bytes written from the master, unplug = unlink and close both ends).

const NO_PYTHON = noPython('it holds the ptys');

describe('SerialInput on a pseudo-terminal', { skip: NO_PYTHON }, () => {
  let dir;
  let link;
  let board;
  let logs;
  let metrics;
  let ingest;
  let ups;
  let input;
  let backoffs;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'serial-input-'));
    link = join(dir, 'ttyUSB0');
    board = new PtyBoard(link);
    logs = captureLogs();
    metrics = createMetrics();
    ingest = fakeIngest();
    ups = [];
    backoffs = [];
  });

  afterEach(async () => {
    await input?.stop();
    input = null;
    await board.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A started SerialInput on the link, its credits released by the test (ingest.releaseAll()). */
  function startInput(baud = 115200, credits = new Credits(2)) {
    const handler = new LineHandler(link, ingest, metrics, credits);
    input = new SerialInput(link, baud, handler, (attempts) => {
      backoffs.push(attempts);
      return 0.05;
    }, (up) => ups.push([up, performance.now()]));
    input.start();
    return input;
  }
  const isUp = () => ups.length > 0 && ups.at(-1)[0] === 1;
  const seqs = () => ingest.frames.map((f) => f.seq);
  const logged = (pattern) => logs.filter((l) => pattern.test(l));

  it('reads what the board sent before the port was opened (no flush at open)', async () => {
    await board.plug();
    await board.write(frameLine('G', 1, { a: 1 }) + frameLine('G', 2, { a: 2 }));
    startInput();
    await waitFor(() => seqs().length === 2, 'the two frames sent before the open');
    assert.deepEqual(seqs(), [1, 2]);
    assert.ok(isUp());
    assert.equal(logged(new RegExp(`level=INFO event=serial_open port=${link} baud=115200\n`)).length, 1);
  });

  it('a rate stty cannot name (250000) opens through the bindings, also without a flush', async () => {
    await board.plug();
    await board.write(frameLine('G', 1, { a: 1 }));
    startInput(250000);
    await waitFor(() => seqs().length === 1, 'the frame sent before the open');
    assert.match(logs.join(''), /event=serial_open port=\S+ baud=250000/);
  });

  it('lines split across reads arrive whole; many lines come in a few reads, not one each', async () => {
    await board.plug();
    startInput();
    await waitFor(isUp, 'the port open');
    const line = frameLine('G', 1, { temp: 20.5 });
    await board.write(line.slice(0, 9));
    await sleep(50); // read on its own
    await board.write(line.slice(9));
    await waitFor(() => seqs().length === 1, 'the split frame');
    ingest.releaseAll();
    let many = '';
    for (let n = 2; n <= 201; n++) many += frameLine('G', n, { n });
    await board.write(many);
    await waitFor(() => { ingest.releaseAll(); return seqs().length === 201; }, '200 frames');
    assert.ok(ingest.received.length <= 1 + 20, `${ingest.received.length - 1} reads for 200 lines`);
    assert.deepEqual(seqs(), Array.from({ length: 201 }, (_, i) => i + 1));
    assert.equal(await valueOf(metrics.rejects, { reason: 'no_frame' }), 0);
    assert.equal(await valueOf(metrics.lines_read, { input: link }), 201);
  });

  it('unplugged and back: lost, watched, reopened within 0.5 s; the partial line counted; bytes kept', async () => {
    await board.plug();
    startInput();
    await waitFor(isUp, 'the port open');
    await board.write(frameLine('G', 1, { a: 1 }) + frameLine('G', 2, { a: 2 }).slice(0, 12));
    await waitFor(() => seqs().length === 1, 'the first frame');
    await sleep(50); // the partial line read too
    await board.unplug();
    await waitFor(() => !isUp(), 'the input down');
    await waitFor(() => logged(/event=serial_absent/).length === 1, 'serial_absent');
    const lost = `level=WARNING event=serial_lost port=${link} error="device reports readiness to read but returned no `
      + `data (device disconnected or multiple access on port?)" action="reopening when the device is back"\n`;
    assert.equal(logs.filter((l) => l.endsWith(lost)).length, 1);
    assert.match(logged(/event=serial_absent/)[0],
      /level=WARNING event=serial_absent port=\S+ action="waiting for the device; reopened as soon as it appears"\n/);
    await sleep(250);
    assert.equal(logged(/event=serial_absent/).length, 1); // rate-limited: once a minute
    assert.equal(await valueOf(metrics.rejects, { reason: 'partial_line' }), 0); // counted at the reopen

    await board.plug();
    const plugged = performance.now();
    await board.write(frameLine('G', 3, { a: 3 })); // sent before the gateway has reopened the port
    await waitFor(isUp, 'the port reopened');
    const reopenedMs = ups.at(-1)[1] - plugged;
    assert.ok(reopenedMs < 500, `reopened ${reopenedMs} ms after the device came back`);
    await waitFor(() => seqs().length === 2, 'the frame sent right after the replug');
    assert.deepEqual(seqs(), [1, 3]);
    assert.equal(await valueOf(metrics.rejects, { reason: 'partial_line' }), 1);
    assert.equal(logged(/event=serial_open/).length, 2);
    assert.equal(backoffs.length, 0); // a missing device is watched, not backed off
  });

  it('with no credit left nothing is read: the bytes wait in the kernel until a credit comes back', async () => {
    await board.plug();
    startInput();
    await waitFor(isUp, 'the port open');
    await board.write(frameLine('G', 1, { a: 1 }));
    await waitFor(() => ingest.received.length === 1, 'read 1');
    await board.write(frameLine('G', 2, { a: 2 }));
    await waitFor(() => ingest.received.length === 2, 'read 2');
    assert.equal(input.handler.credits.available, 0);
    const rest = frameLine('G', 3, { a: 3 }) + frameLine('G', 4, { a: 4 });
    await board.write(rest);
    await sleep(300);
    assert.equal(ingest.received.length, 2);
    await waitFor(async () => (await board.pending()) === rest.length, 'the rest waiting in the kernel');
    assert.equal(ingest.received.length, 2);
    ingest.releaseAll(); // the ingest committed reads 1 and 2
    await waitFor(() => seqs().length === 4, 'frames 3 and 4 after the credits came back');
    assert.equal(await board.pending(), 0);
  });

  it('status lines and noise give their credit back at once and reading goes on', async () => {
    await board.plug();
    startInput();
    await waitFor(isUp, 'the port open');
    for (let i = 0; i < 5; i++) {
      await board.write(`# tick ${i}\nnoise\n`);
      await sleep(10);
    }
    await waitFor(async () => await valueOf(metrics.status_lines, { input: link }) === 5, '5 status lines');
    assert.equal(await valueOf(metrics.rejects, { reason: 'no_frame' }), 5);
    assert.equal(ingest.received.length, 0);
    assert.ok(input.handler.credits.available >= 1); // one may be held by the read waiting for bytes
  });

  it('a path that is no tty fails to open and is retried with backoff until it is a port', async () => {
    writeFileSync(link, 'not a tty\n');
    startInput();
    await waitFor(() => backoffs.length >= 3, 'three failed opens');
    assert.deepEqual(backoffs.slice(0, 3), [1, 2, 3]);
    const unavailable = logged(/event=serial_unavailable/);
    assert.equal(unavailable.length, 1); // rate-limited
    assert.ok(unavailable[0].endsWith(`level=WARNING event=serial_unavailable port=${link} error="stty: ${link}: `
      + 'Inappropriate ioctl for device" action="retrying with backoff"\n'), unavailable[0]); // stty's words
    assert.ok(!isUp());
    await board.plug(); // replaces the file with the link
    await board.write(frameLine('G', 1, { a: 1 }));
    await waitFor(() => seqs().length === 1, 'the frame once the port is there');
  });

  it('a port absent at the start is opened as soon as it appears', async () => {
    startInput();
    await waitFor(() => logged(/event=serial_absent/).length === 1, 'serial_absent');
    assert.ok(!isUp());
    await board.plug();
    const plugged = performance.now();
    await waitFor(isUp, 'the port open');
    assert.ok(ups.at(-1)[1] - plugged < 300);
  });

  it('stop() ends a wait for bytes, for a credit or for the device, and closes the port', async () => {
    await board.plug();
    startInput();
    await waitFor(isUp, 'the port open');
    const stopped = performance.now();
    await input.stop(); // waiting for bytes, which would otherwise wait for ever: any bound shows the wait ended
    assert.ok(performance.now() - stopped < 2000);
    assert.ok(!isUp());
    await board.write('$T1,G,9,a=9'); // nobody reads any more: it stays in the kernel
    // The pty moves written bytes to the reader's side in a kernel work item: under load they show a moment later.
    await waitFor(async () => (await board.pending()) === 11, 'the 11 bytes waiting in the kernel');

    startInput(115200, new Credits(0)); // waiting for a credit
    await waitFor(isUp, 'the port open again');
    await input.stop();
    assert.equal(await board.pending(), 11);
    assert.equal(await valueOf(metrics.rejects, { reason: 'partial_line' }), 0);

    await board.unplug();
    startInput(); // waiting for the device
    await waitFor(() => logged(/event=serial_absent/).length >= 1, 'serial_absent');
    await input.stop();
  });
});

// --- StreamInput: a file or stdin, read to its end.

describe('StreamInput', () => {
  let dir;
  let logs;
  let metrics;
  let ingest;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'stream-input-'));
    logs = captureLogs();
    metrics = createMetrics();
    ingest = fakeIngest();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  let replayed; // the text of the last replayFile()
  /** A file of frames 1..count, the last without its newline, after a status line. */
  function replayFile(count) {
    const path = join(dir, 'replay.log');
    let text = '# replay\n';
    for (let n = 1; n <= count; n++) text += frameLine('R', n, { n });
    writeFileSync(path, text.slice(0, -2));
    replayed = text;
    return path;
  }

  function startInput(path) {
    let ends = 0;
    let resolveEnded;
    const ended = new Promise((resolve) => { resolveEnded = resolve; });
    const input = new StreamInput(path, new LineHandler(path, ingest, metrics, new Credits(STREAM_CREDITS)), () => {
      ends += 1;
      resolveEnded();
    });
    input.start();
    return { input, ended, ends: () => ends };
  }
  const seqs = () => ingest.frames.map((f) => f.seq);
  const oneToN = (count) => Array.from({ length: count }, (_, i) => i + 1);

  it('reads a file to its end, a last line without newline too; input_ended, onEnd once', async () => {
    const path = replayFile(1000);
    const { ended, ends } = startInput(path);
    const releasing = setInterval(() => ingest.releaseAll(), 1);
    await ended;
    clearInterval(releasing);
    assert.deepEqual(seqs(), oneToN(1000));
    assert.equal(await valueOf(metrics.lines_read, { input: path }), 1001);
    assert.equal(await valueOf(metrics.status_lines, { input: path }), 1);
    assert.equal(logs.filter((l) => l.endsWith(` level=INFO event=input_ended input=${path}\n`)).length, 1);
    await sleep(20);
    assert.equal(ends(), 1);
  });

  it('reads in chunks of READ_CHUNK under 32 credits: paused while none is left, on again when they come back',
    async () => {
      const count = Math.ceil((40 * READ_CHUNK) / frameLine('R', 1000, { n: 1000 }).length);
      const path = replayFile(count);
      const { ended, ends } = startInput(path);
      await waitFor(() => ingest.received.length === STREAM_CREDITS, '32 reads'); // each with frames
      await sleep(100);
      assert.equal(ingest.received.length, STREAM_CREDITS); // no credit left: no further read
      assert.equal(ends(), 0);
      // 32 reads of exactly READ_CHUNK bytes each, nothing further
      const linesIn32Reads = replayed.slice(0, STREAM_CREDITS * READ_CHUNK).split('\n').length - 1;
      assert.equal(await valueOf(metrics.lines_read, { input: path }), linesIn32Reads);
      const releasing = setInterval(() => ingest.releaseAll(), 1);
      await ended;
      clearInterval(releasing);
      assert.deepEqual(seqs(), oneToN(count));
      assert.ok(ingest.received.length <= Math.ceil(40 * 1.1) + 1, `${ingest.received.length} reads`);
    });

  it('stop() ends a file mid-way: what was read counts, its partial line too; input_ended, onEnd once', async () => {
    const path = replayFile(30000);
    const { input, ends } = startInput(path); // nothing released: it pauses after 32 reads
    await waitFor(() => ingest.received.length === STREAM_CREDITS, '32 reads');
    await input.stop();
    const handedOver = ingest.received.length;
    assert.equal(handedOver, STREAM_CREDITS);
    assert.equal(ends(), 1);
    // finish(), as Python's loop ends: the partial line the last read ended with is a line (a rejected one here)
    const rejects = (await metrics.rejects.get()).values.reduce((sum, v) => sum + v.value, 0);
    assert.equal(rejects, 1);
    assert.equal(logs.filter((l) => l.includes('event=input_ended')).length, 1);
    ingest.releaseAll();
    await sleep(50);
    assert.equal(ingest.received.length, handedOver);
    await input.stop();
    assert.equal(ends(), 1);
  });

  it('a file that cannot be opened: the error on stderr, no input_ended, no onEnd (as Python\'s thread dies)',
    async () => {
      const written = [];
      const write = process.stderr.write;
      process.stderr.write = (text) => { written.push(String(text)); return true; };
      let input;
      let ends;
      try {
        ({ input, ends } = startInput(join(dir, 'missing.log')));
        await sleep(50);
      } finally {
        process.stderr.write = write;
      }
      assert.match(written.join(''), /^Exception in thread input \S+missing\.log:\nError: ENOENT: no such file/);
      assert.equal(ends(), 0);
      assert.equal(logs.filter((l) => l.includes('event=input_ended')).length, 0);
      await input.stop();
      assert.equal(ends(), 0);
    });

  it('reads stdin (\'-\')', async () => {
    const source = new URL('../src/', import.meta.url).href;
    const script = `
      import { Credits } from '${source}credits.js';
      import { LineHandler } from '${source}line-handler.js';
      import { StreamInput } from '${source}stream-input.js';
      import { setupLogging } from '${source}logs.js';
      import { createMetrics } from '${source}metrics.js';
      setupLogging('info');
      const metrics = createMetrics();
      const seqs = [];
      const ingest = { put(received) {
        seqs.push(...received.frames.map((f) => f.seq));
        setImmediate(() => received.credits.release());
      } };
      new StreamInput('-', new LineHandler('-', ingest, metrics, new Credits(32)), async () => {
        const lines = (await metrics.lines_read.get()).values;
        process.stdout.write(JSON.stringify({ seqs, lines }));
      }).start();`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data) => { stdout += data; });
    child.stderr.on('data', (data) => { stderr += data; });
    const exited = new Promise((resolve) => { child.on('exit', resolve); });
    let text = '';
    for (let n = 1; n <= 3000; n++) text += frameLine('S', n, { n });
    child.stdin.write(text.slice(0, 50000));
    await sleep(50);
    child.stdin.end(text.slice(50000, -2)); // the last line without its newline
    assert.equal(await exited, 0, stderr);
    const { seqs: read, lines } = JSON.parse(stdout);
    assert.deepEqual(read, oneToN(3000));
    assert.deepEqual(lines, [{ value: 3000, labels: { input: '-' } }]);
    assert.match(stderr, / level=INFO event=input_ended input=-\n$/);
  });
});
