// Every stop keeps what was read (gateway/contract/spool.md), also when a stage fails: an unexpected error in the
// ingest ends the stage, not the process; the stop still commits every frame held in memory, with its id, and the
// gateway exits with status 1 after its gateway_stopped line. The failpoint TELEMETRY_GATEWAY_FAILPOINT=
// ingest_after_frames:N makes such an error, as the conformance harness does.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Credits } from '../src/credits.js';
import { crc16CcittFalse } from '../src/crc16.js';
import { frame as decodedFrame } from '../src/decoded.js';
import { Ingest } from '../src/ingest.js';
import { createMetrics } from '../src/metrics.js';
import { failpointFrames } from '../src/service.js';
import { Spool } from '../src/spool/index.js';

const BIN = fileURLToPath(new URL('../bin/telemetry-gateway-node', import.meta.url));
const SCRATCH = mkdtempSync(join(tmpdir(), 'stage-failure-test-'));
after(() => rmSync(SCRATCH, { recursive: true, force: true }));
let cases = 0;
const tmpPath = (name) => join(SCRATCH, `${cases++}-${name}`);

const CONFIG = { decode: { duplicate_window_s: 10, max_sources: 1000 }, time: { max_future_s: 60, max_age_days: 366 },
  spool: { when_full: 'pause' } };
const tick = () => new Promise((resolve) => { setImmediate(resolve); });
const fileIds = (spool) => spool._store.db.prepare('SELECT id FROM frames ORDER BY id').pluck().all();

describe('the ingest stage failing', () => {
  function failingIngest(failAfterFrames) {
    const spool = new Spool(tmpPath('s.sqlite'), { fsync: 'deferred', holdMs: 60_000 });
    spool.setLink(true, true); // frames are held in memory
    const died = [];
    const ingest = new Ingest(CONFIG, spool, createMetrics(), () => {}, { failAfterFrames,
      onDied: (error) => died.push(error) });
    let seq = 0;
    const put = (n) => ingest.put({ receivedMs: Date.now(), credits: new Credits(4),
      frames: Array.from({ length: n }, () => decodedFrame('v1', 'G', ++seq, null, [['n', seq]])) });
    return { spool, ingest, died, put };
  }

  it('dies right after the group that reached N, and its stop commits the held frames with their ids', async () => {
    const { spool, ingest, died, put } = failingIngest(3);
    put(2);
    await tick();
    assert.deepEqual([died.length, spool.heldFrames], [0, 2]);
    put(2);
    await tick();
    assert.equal(died.length, 1);
    assert.match(died[0].message, /^failpoint ingest_after_frames:3: 4 frames accepted$/);
    assert.equal(spool.heldFrames, 4); // handed over before the error
    put(3); // read after the stage died: never handed to the spool
    await tick();
    assert.equal(spool.heldFrames, 4);
    await ingest.stop();
    assert.deepEqual(fileIds(spool), [1, 2, 3, 4]);
    assert.equal(spool.heldFrames, 0);
    assert.deepEqual([ingest.lostFrames, ingest.unspooledFrames()], [0, 3]);
    assert.equal(spool.close(), 0);
  });

  it('dies on any unexpected error from the spool too, rather than taking the process down', async () => {
    const { spool, ingest, died, put } = failingIngest(null);
    put(1);
    await tick();
    const commit = spool.commit;
    spool.commit = () => { throw new TypeError('a bug'); };
    put(1);
    await tick();
    assert.deepEqual(died.map((error) => error.message), ['a bug']);
    spool.commit = commit;
    await ingest.stop();
    assert.deepEqual(fileIds(spool), [1]);
    assert.equal(ingest.unspooledFrames(), 1); // accepted, never handed over
    spool.close();
  });

  it('reads the failpoint from the environment: unset costs nothing', () => {
    assert.equal(failpointFrames({}), null);
    assert.equal(failpointFrames({ TELEMETRY_GATEWAY_FAILPOINT: 'ingest_after_frames:25' }), 25);
    assert.equal(failpointFrames({ TELEMETRY_GATEWAY_FAILPOINT: 'sender_somewhere:1' }), null);
    assert.throws(() => failpointFrames({ TELEMETRY_GATEWAY_FAILPOINT: 'ingest_after_frames:x' }), /a count/);
  });
});

describe('the gateway process', () => {
  /** Lines of v1 frames G 1..n, as a board prints them. */
  function input(n) {
    const path = tmpPath('input.txt');
    writeFileSync(path, Array.from({ length: n }, (_, i) => {
      const body = `T1,G,${i + 1},n=${i}`;
      return `$${body}*${crc16CcittFalse(body).toString(16).toUpperCase().padStart(4, '0')}\r\n`;
    }).join(''));
    return path;
  }

  /** The gateway on an input file, Cassandra unreachable (port 1), metrics off; resolves to {status, stderr}. */
  function run(spool, inputPath, env, whenLogged = null) {
    const config = tmpPath('config.toml');
    writeFileSync(config, `[spool]\npath = "${spool}"\n[cassandra]\nhosts = ["127.0.0.1"]\nport = 1\n`
      + '[metrics]\nlisten = ""\n');
    const child = spawn(process.execPath, [BIN, 'run', '--config', config, '--input', inputPath],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text) => {
      stderr += text;
      if (whenLogged !== null && stderr.includes(whenLogged[0])) {
        whenLogged[1](child);
        whenLogged = null;
      }
    });
    const timeout = setTimeout(() => child.kill('SIGKILL'), 30_000);
    return new Promise((resolve) => {
      child.on('exit', (status) => {
        clearTimeout(timeout);
        resolve({ status, stderr });
      });
    });
  }

  it('a failed ingest: stage_died with its stack, every frame kept, exit status 1', async () => {
    const spool = tmpPath('spool.sqlite');
    const { status, stderr } = await run(spool, input(10), { TELEMETRY_GATEWAY_FAILPOINT: 'ingest_after_frames:4' });
    assert.equal(status, 1, stderr);
    assert.match(stderr, /Error in stage ingest: Error: failpoint ingest_after_frames:4[^\n]*\n {4}at /);
    assert.ok(stderr.includes(' level=ERROR event=stage_died stages=ingest action="exiting with status 1 to be '
      + 'restarted; frames held in memory are committed first"\n'), stderr);
    const lines = stderr.trimEnd().split('\n');
    assert.match(lines.at(-1), / level=INFO event=gateway_stopped spooled_frames=10 lost_frames=0$/);
    const reopened = new Spool(spool);
    assert.deepEqual(reopened.take(0, 100).map((f) => f.id), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.deepEqual([...reopened.lastSourceSeqs()], [['G', [10, reopened.take(9, 1)[0].ts_ms]]]);
    reopened.close();
  });

  it('SIGTERM: exit status 0, and the last line says nothing was lost', async () => {
    const spool = tmpPath('spool.sqlite');
    const { status, stderr } = await run(spool, input(3), { TELEMETRY_GATEWAY_FAILPOINT: '' },
      ['event=input_ended', (child) => child.kill('SIGTERM')]);
    assert.equal(status, 0, stderr);
    assert.doesNotMatch(stderr, /stage_died/);
    assert.match(stderr.trimEnd().split('\n').at(-1),
      / level=INFO event=gateway_stopped spooled_frames=3 lost_frames=0$/);
  });
});
