// The alert rules' commands (gateway/contract/alerts.md, "The command"): an argv list, never a shell, the alert in
// its environment, killed after its timeout; at most one run in flight per rule, later transitions of a rule wait
// (the newest per source). Runs are child processes the event loop watches: the ingest never waits for one.

import { spawn } from 'node:child_process';

import { ERROR_CHARS, LONG_INTERVAL_S, RateLimitedLog } from './logs.js';
import { numberText } from './text-forms.js';

// The only variables of the gateway's environment a command gets (alerts.md): an allow-list, because a service's
// environment carries more than the gateway's own TELEMETRY_* (CREDENTIALS_DIRECTORY, NOTIFY_SOCKET, WATCHDOG_*).
const PASSED_ENV = Object.freeze(['PATH', 'LANG', 'HOME', 'TZ']);

/** The command's environment: the allow-listed variables of base, plus ALERT_*. */
export function commandEnv(t, base) {
  const passed = PASSED_ENV.filter((name) => base[name] !== undefined);
  const env = Object.fromEntries(passed.map((name) => [name, base[name]]));
  return Object.assign(env, {
    ALERT_RULE: t.rule, ALERT_SOURCE: t.source, ALERT_STATE: t.state, ALERT_KIND: t.kind,
    ALERT_METRIC: t.metric ?? '', ALERT_VALUE: numberText(t.value), ALERT_THRESHOLD: numberText(t.threshold),
    ALERT_AT: String(t.at), ALERT_TIME: new Date(t.at).toISOString(),
  });
}

/** SIGKILL to the run's process group (detached: a group of its own), so a script's children go with it. */
function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** One run: resolves null when it exited 0, else [reason, detail] as alert_command_failed names them. */
function runOnce(argv, env, timeoutS, started) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(argv[0], argv.slice(1), { env, stdio: 'ignore', detached: true });
    } catch (error) {
      resolve(['not_started', `${argv[0]}: ${error.message}`]);
      return;
    }
    started(child);
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; killGroup(child); }, timeoutS * 1000);
    const done = (result) => { clearTimeout(timer); resolve(result); };
    child.once('error', (error) => done(['not_started', `${argv[0]}: ${error.message}`]));
    child.once('exit', (code, signal) => {
      killGroup(child); // what the run left running in its group (a backgrounded child) ends with it
      if (timedOut) done(['timeout', `still running after ${numberText(timeoutS)} s: killed`]);
      else if (signal !== null) done(['signal', `killed by signal ${signal}`]);
      else done(code === 0 ? null : ['exit_status', `exit status ${code}`]);
    });
  });
}

export class AlertCommands {
  /** onFailure(rule): counts a failed run of the rule named. */
  constructor(rules, onFailure, baseEnv = process.env) {
    this.rules = new Map(rules.filter((rule) => rule.command.length).map((rule) => [rule.name, rule]));
    this.onFailure = onFailure;
    this.baseEnv = baseEnv;
    this.waiting = new Map([...this.rules.keys()].map((name) => [name, new Map()]));
    this.running = new Map(); // rule -> its run's child process (null: starting)
    this.stopped = false;
    this.log = new RateLimitedLog({ intervalS: LONG_INTERVAL_S });
  }

  /** Run the rule's command for this transition now, or after the run in flight (never waits). */
  submit(t) {
    if (!this.rules.has(t.rule) || this.stopped) return;
    const waiting = this.waiting.get(t.rule);
    waiting.set(t.source, t); // a newer transition of a source replaces the one waiting, in its place
    if (this.running.has(t.rule)) return;
    this.running.set(t.rule, null);
    this.drain(t.rule);
  }

  async drain(name) {
    const rule = this.rules.get(name);
    const waiting = this.waiting.get(name);
    while (!this.stopped && waiting.size) {
      const [source, t] = waiting.entries().next().value;
      waiting.delete(source);
      const failure = await runOnce(rule.command, commandEnv(t, this.baseEnv), rule.command_timeout_s,
        (child) => this.running.set(name, child));
      if (failure !== null && !this.stopped) {
        const [reason, detail] = failure;
        this.onFailure(name);
        this.log.event('warning', 'alert_command_failed', { key: name, rule: name, source: t.source,
          state: t.state, reason, detail: detail.slice(0, ERROR_CHARS),
          action: "check the rule's command; the alert itself stands" });
      }
    }
    this.running.delete(name);
  }

  /** Waiting runs are dropped, runs in flight killed: a stop waits for no command. */
  stop() {
    this.stopped = true;
    for (const waiting of this.waiting.values()) waiting.clear();
    for (const child of this.running.values()) {
      if (child !== null && child.exitCode === null && child.signalCode === null) killGroup(child);
    }
  }

  /** No run in flight or waiting (tests wait for it). */
  get idle() {
    return this.running.size === 0;
  }
}
