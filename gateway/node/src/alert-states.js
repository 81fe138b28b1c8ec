// The alert rules' evaluation (gateway/contract/alerts.md), pure: accepted frames and clock ticks in, transitions
// out. Per (rule, source) a state machine ok -> pending -> firing -> ok; threshold rules on reading time, silence
// rules on the gateway's clock. No I/O and no clock of its own: alerting.js feeds it and acts on its transitions.
//
// A transition is {rule, source, state: 'firing'|'ok', kind, metric (null for silence), value, threshold, at}.

import { kindOf, thresholdOf } from './alert-rules.js';

export const OK = 'ok';
export const PENDING = 'pending';
export const FIRING = 'firing';

export class AlertStates {
  /**
   * @param {object[]} rules parsed [[alerts]] rules (alert-rules.js)
   * @param {number} startMs the gateway's start on its clock
   * @param {number} maxSources per rule, the sources with a state
   * @param {Iterable<string>} known the sources the spool knows from earlier runs
   */
  constructor(rules, startMs, maxSources, known = []) {
    this.rules = rules;
    this.maxSources = maxSources;
    // per rule: source -> {state, since, last}, least recently judged first (a Map keeps insertion order)
    this.pairs = rules.map(() => new Map());
    this.forgotten = [];
    this.silence = [];
    rules.forEach((rule, i) => {
      if (rule.silent_s === null) return;
      this.silence.push(i);
      for (const source of rule.source === '*' ? known : [rule.source]) this.pair(i, source, startMs);
    });
  }

  /** The metrics the threshold rules compare. */
  get metrics() {
    return new Set(this.rules.filter((rule) => rule.silent_s === null).map((rule) => rule.metric));
  }

  /** An accepted frame: its reading time, its receipt time and its values ({metric: number} or a Map). */
  frame(source, tsMs, receivedMs, values) {
    const get = values instanceof Map ? (name) => values.get(name) : (name) => values[name];
    const out = [];
    this.rules.forEach((rule, i) => {
      if (rule.source !== '*' && rule.source !== source) return;
      if (rule.silent_s !== null) {
        this.heard(i, rule, source, receivedMs, out);
        return;
      }
      const value = get(rule.metric);
      if (value !== undefined) this.judge(i, rule, source, tsMs, value, out);
    });
    return out;
  }

  /** The gateway's clock: silence rules raise for sources silent longer than silent_s. */
  tick(nowMs) {
    const out = [];
    for (const i of this.silence) {
      const rule = this.rules[i];
      for (const [source, pair] of this.pairs[i]) {
        const silentMs = nowMs - pair.last;
        if (pair.state === OK && silentMs > rule.silent_s * 1000) {
          Object.assign(pair, { state: FIRING, since: nowMs });
          out.push(transition(rule, source, FIRING, silentMs / 1000, rule.silent_s, nowMs));
        }
      }
    }
    return out;
  }

  /** [rule, source] pairs dropped past maxSources since the last call: their gauge series go. */
  takeForgotten() {
    const forgotten = this.forgotten;
    this.forgotten = [];
    return forgotten;
  }

  /** Per source, each rule's {rule, state, sinceMs} (sinceMs null for ok never left): for /status.json. */
  states() {
    const bySource = new Map();
    this.rules.forEach((rule, i) => {
      for (const [source, pair] of this.pairs[i]) {
        if (!bySource.has(source)) bySource.set(source, []);
        bySource.get(source).push({ rule: rule.name, state: pair.state, sinceMs: pair.since });
      }
    });
    return bySource;
  }

  pair(i, source, last) {
    const pairs = this.pairs[i];
    let pair = pairs.get(source);
    if (pair !== undefined) {
      pairs.delete(source); // to the end: the most recently judged
      pairs.set(source, pair);
      return pair;
    }
    pair = { state: OK, since: null, last };
    pairs.set(source, pair);
    if (pairs.size > this.maxSources) {
      const [old] = pairs.keys();
      pairs.delete(old);
      this.forgotten.push([this.rules[i].name, old]);
    }
    return pair;
  }

  heard(i, rule, source, receivedMs, out) {
    const pair = this.pair(i, source, receivedMs);
    if (pair.state === FIRING) {
      Object.assign(pair, { state: OK, since: receivedMs });
      out.push(transition(rule, source, OK, (receivedMs - pair.last) / 1000, rule.silent_s, receivedMs));
    }
    pair.last = Math.max(pair.last, receivedMs);
  }

  judge(i, rule, source, tsMs, value, out) {
    const pair = this.pair(i, source, tsMs);
    if (tsMs < pair.last) return; // out of order
    pair.last = tsMs;
    const below = rule.below !== null;
    if (pair.state === FIRING) {
      if (below ? value >= rule.clear_at : value <= rule.clear_at) {
        Object.assign(pair, { state: OK, since: tsMs });
        out.push(transition(rule, source, OK, value, rule.clear_at, tsMs));
      }
      return;
    }
    if (!(below ? value < rule.below : value > rule.above)) {
      if (pair.state === PENDING) Object.assign(pair, { state: OK, since: null });
      return;
    }
    if (pair.state === OK) Object.assign(pair, { state: PENDING, since: tsMs });
    if (tsMs - pair.since >= rule.for_s * 1000) {
      Object.assign(pair, { state: FIRING, since: tsMs });
      out.push(transition(rule, source, FIRING, value, thresholdOf(rule), tsMs));
    }
  }
}

function transition(rule, source, state, value, threshold, at) {
  const kind = kindOf(rule);
  return { rule: rule.name, source, state, kind, metric: kind === 'silence' ? null : rule.metric, value, threshold,
    at };
}
