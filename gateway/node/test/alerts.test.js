// Alert rules (gateway/contract/alerts.md): vectors/alerts.jsonl against the pure evaluation, then the shell: log
// lines, the gauge, the status seam and the commands (argv, environment, timeout, one run in flight per rule).

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import Database from 'better-sqlite3';

import { AlertCommands, commandEnv } from '../src/alert-commands.js';
import { parseAlertRules } from '../src/alert-rules.js';
import { AlertStates } from '../src/alert-states.js';
import { Alerting } from '../src/alerting.js';
import { loadConfig } from '../src/config.js';
import { Ingest } from '../src/ingest.js';
import { setupLogging } from '../src/logs.js';
import { createMetrics } from '../src/metrics.js';
import { packValues } from '../src/reading-values.js';
import { Spool } from '../src/spool/index.js';
import { contractVectors } from '../test-support/vectors.js';

const SCRATCH = mkdtempSync(join(tmpdir(), 'alerts-test-'));
after(() => rmSync(SCRATCH, { recursive: true, force: true }));

describe('alerts.jsonl', () => {
  for (const c of contractVectors('alerts.jsonl')) {
    it(c.name, () => {
      const { params } = c;
      const states = new AlertStates(parseAlertRules(c.rules, ''), params.start_ms, params.max_sources, params.known);
      c.steps.forEach((step, number) => {
        const got = 'tick' in step ? states.tick(step.tick)
          : states.frame(step.frame.source, step.frame.ts, step.frame.received, step.frame.values);
        assert.deepEqual(got, step.expect, `step ${number}`);
      });
    });
  }
});

const FROST = { name: 'frost', metric: 'temp_in', below: 2.0, clear_at: 3.0 };

function row(source, ts, values) {
  return { source, ts_ms: ts, received_ms: ts, ...packValues(Object.entries(values)) };
}

async function waitFor(condition, timeoutMs = 5000) {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    assert.ok(performance.now() < deadline, 'timed out');
    await sleep(10);
  }
}

async function gauge(metrics, name, labels) {
  const { values } = await metrics.registry.getSingleMetric(name).get();
  return values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value;
}

/** A node script as a command's argv. */
let scripts = 0;
function script(body) {
  scripts += 1;
  const path = join(SCRATCH, `cmd${scripts}.mjs`);
  writeFileSync(path, `import { appendFileSync } from 'node:fs';\n${body}\n`);
  return [process.execPath, path];
}

function transition(source = 'g1', state = 'firing') {
  return { rule: 'frost', source, state, kind: 'below', metric: 'temp_in', value: 1.5, threshold: 2,
    at: 1_700_000_000_123 };
}

describe('alerting', () => {
  it('transitions log, set the gauge and feed the status seam', async () => {
    const lines = [];
    setupLogging('info', { write: (text) => lines.push(text) });
    const metrics = createMetrics();
    const alerting = new Alerting(parseAlertRules([FROST], ''), metrics, { maxSources: 1000, startMs: 0 });
    alerting.frames([row('g1', 1000, { temp_in: 5, humidity: 40 }), row('g1', 2000, { temp_in: 1.5 })]);
    assert.deepEqual(alerting.alertStates(),
      { g1: [{ rule: 'frost', state: 'firing', since: '1970-01-01T00:00:02.000Z' }] });
    assert.equal(await gauge(metrics, 'telemetry_gateway_alerts_firing', { rule: 'frost', source: 'g1' }), 1);
    alerting.frames([row('g1', 3000, { temp_in: 3 })]);
    assert.equal(await gauge(metrics, 'telemetry_gateway_alerts_firing', { rule: 'frost', source: 'g1' }), 0);
    setupLogging('warning');
    assert.deepEqual(lines.map((line) => line.replace(/^\S+ /, '')), [
      'level=WARNING event=alert_raised rule=frost source=g1 kind=below metric=temp_in value=1.5 threshold=2 at=2000\n',
      'level=INFO event=alert_cleared rule=frost source=g1 kind=below metric=temp_in value=3 threshold=3 at=3000\n']);
  });

  it('the sources an earlier run left (receipt stamps, stored seqs) are known from the start', () => {
    const path = join(SCRATCH, 'known.sqlite');
    let spool = new Spool(path);
    spool.commit([], [], { stamped: 5 });
    spool.close();
    const db = new Database(path);
    db.prepare("INSERT INTO source_seqs (source, seq, ts_ms) VALUES ('clocked', 7, 0)").run();
    db.close();
    spool = new Spool(path);
    try {
      const ingest = new Ingest(loadConfig(null, {}, { env: {} }), spool, createMetrics(), () => {});
      assert.deepEqual(ingest.knownSources.sort(), ['clocked', 'stamped']);
    } finally {
      spool.close();
    }
  });

  it('silence is ticked; a forgotten source loses its series', async () => {
    const metrics = createMetrics();
    const alerting = new Alerting(parseAlertRules([{ name: 'quiet', silent_s: 1 }], ''), metrics,
      { maxSources: 1, known: ['old'], startMs: 0 });
    setupLogging('error');
    alerting.tick(1001);
    assert.equal(await gauge(metrics, 'telemetry_gateway_alerts_firing', { rule: 'quiet', source: 'old' }), 1);
    alerting.frames([row('new', 5, { temp_in: 1 })]);
    assert.equal(await gauge(metrics, 'telemetry_gateway_alerts_firing', { rule: 'quiet', source: 'old' }),
      undefined);
    setupLogging('warning');
  });
});

/** A script that starts a child (sleep 30), writes its pid to pidFile, and waits. */
function slowWithAChild(pidFile) {
  return `import { spawn } from 'node:child_process';\nimport { writeFileSync } from 'node:fs';\n`
    + `writeFileSync(${JSON.stringify(pidFile)}, String(spawn('sleep', ['30'], { stdio: 'ignore' }).pid));\n`
    + 'await new Promise((r) => setTimeout(r, 30000));';
}

/** A script that starts a child (sleep 30) in the background, writes its pid to pidFile, and exits at once. */
function backgroundsAChild(pidFile) {
  return `import { spawn } from 'node:child_process';\nimport { writeFileSync } from 'node:fs';\n`
    + `const child = spawn('sleep', ['30'], { stdio: 'ignore' });\nchild.unref();\n`
    + `writeFileSync(${JSON.stringify(pidFile)}, String(child.pid));\n`;
}

/** No such process, or a zombie nobody has reaped yet. */
function gone(pid) {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').at(-1).trim().split(' ')[0] === 'Z';
  } catch {
    return true;
  }
}

describe('alert commands', () => {
  it('the command gets the alert in its environment and no credentials', () => {
    const serviceEnv = { PATH: '/bin', LANG: 'C.UTF-8', HOME: '/var/lib/telemetry-gateway', TZ: 'UTC',
      TELEMETRY_CASSANDRA_PASSWORD: 's3cret', CREDENTIALS_DIRECTORY: '/run/credentials/gw',
      NOTIFY_SOCKET: '/run/systemd/notify', WATCHDOG_USEC: '60000000', WATCHDOG_PID: '1', SOME_SECRET: 'x',
      LD_PRELOAD: '/tmp/evil.so' };
    assert.deepEqual(commandEnv(transition(), serviceEnv), {
      PATH: '/bin', LANG: 'C.UTF-8', HOME: '/var/lib/telemetry-gateway', TZ: 'UTC', ALERT_RULE: 'frost', ALERT_SOURCE: 'g1', ALERT_STATE: 'firing', ALERT_KIND: 'below',
      ALERT_METRIC: 'temp_in', ALERT_VALUE: '1.5', ALERT_THRESHOLD: '2', ALERT_AT: '1700000000123',
      ALERT_TIME: '2023-11-14T22:13:20.123Z' });
  });

  it('one run in flight per rule, the newest waiting per source', async () => {
    const out = join(SCRATCH, 'runs');
    const argv = script(`appendFileSync(${JSON.stringify(out)}, process.env.ALERT_SOURCE + ' ' `
      + `+ process.env.ALERT_STATE + '\\n');\nif (process.env.ALERT_SOURCE === 'g1') `
      + 'await new Promise((r) => setTimeout(r, 300));');
    const failures = [];
    const rules = parseAlertRules([{ ...FROST, command: argv }], '');
    const commands = new AlertCommands(rules, (rule) => failures.push(rule));
    commands.submit(transition('g1', 'firing'));
    commands.submit(transition('g2', 'firing')); // waits for g1's run
    commands.submit(transition('g2', 'ok')); // replaces g2's waiting transition
    commands.submit(transition('g3', 'firing'));
    await waitFor(() => commands.idle);
    assert.deepEqual(readFileSync(out, 'utf8').split('\n').filter(Boolean), ['g1 firing', 'g2 ok', 'g3 firing']);
    assert.deepEqual(failures, []);
  });

  it('failed runs are logged and counted, never retried', async () => {
    const lines = [];
    setupLogging('warning', { write: (text) => lines.push(text) });
    const metrics = createMetrics();
    const rules = parseAlertRules([{ ...FROST, command: script('process.exit(3);') },
      { ...FROST, name: 'slow', command: script('await new Promise((r) => setTimeout(r, 30000));'),
        command_timeout_s: 0.2 },
      { ...FROST, name: 'absent', command: [join(SCRATCH, 'no-such-program')] }], '');
    const alerting = new Alerting(rules, metrics, { maxSources: 1000, startMs: 0 });
    alerting.frames([row('g1', 1000, { temp_in: 0 })]);
    await waitFor(() => alerting.commands.idle);
    setupLogging('warning');
    const failed = lines.filter((line) => line.includes('alert_command_failed')).sort();
    assert.equal(failed.length, 3);
    assert.match(failed.find((l) => l.includes('rule=absent')), /source=g1 state=firing reason=not_started /);
    assert.match(failed.find((l) => l.includes('rule=frost')), /reason=exit_status detail="exit status 3"/);
    assert.match(failed.find((l) => l.includes('rule=slow')), /reason=timeout /);
    for (const rule of ['frost', 'slow', 'absent']) {
      assert.equal(await gauge(metrics, 'telemetry_gateway_alert_command_failures_total', { rule }), 1);
    }
  });

  it('a child the command left running is killed when it exits', async () => {
    const pidFile = join(SCRATCH, 'background.pid');
    const failures = [];
    const commands = new AlertCommands(parseAlertRules([{ ...FROST, command: script(backgroundsAChild(pidFile)) }],
      ''), (rule) => failures.push(rule));
    commands.submit(transition());
    await waitFor(() => commands.idle);
    assert.deepEqual(failures, []); // the run itself exited 0
    await waitFor(() => gone(readFileSync(pidFile, 'utf8'))); // its backgrounded sleep went with its group
  });

  it('stop kills runs in flight, with their children', async () => {
    const pidFile = join(SCRATCH, 'child.pid');
    const commands = new AlertCommands(parseAlertRules([{ ...FROST, command: script(slowWithAChild(pidFile)),
      command_timeout_s: 60 }], ''), () => {});
    commands.submit(transition());
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '');
    const started = performance.now();
    commands.stop();
    await waitFor(() => commands.idle);
    assert.ok(performance.now() - started < 2000);
    await waitFor(() => gone(readFileSync(pidFile, 'utf8'))); // the run's whole process group
  });
});
