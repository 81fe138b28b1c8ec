// The alert rules in the running gateway (gateway/contract/alerts.md): the ingest hands over each group of accepted
// rows, the service's loop ticks the clock; each transition gives its log line, the alerts_firing gauge and the
// rule's command. The evaluation itself is alert-states.js (pure); the commands alert-commands.js.

import { AlertCommands } from './alert-commands.js';
import { AlertStates, FIRING } from './alert-states.js';
import { event } from './logs.js';
import { unpackValues } from './reading-values.js';

export class Alerting {
  /**
   * @param {object[]} rules config.alerts
   * @param {object} metrics createMetrics()'s
   * @param {{maxSources: number, known?: Iterable<string>, startMs?: number, baseEnv?: object}} options
   */
  constructor(rules, metrics, { maxSources, known = [], startMs = Date.now(), baseEnv = process.env }) {
    this.active = rules.length > 0;
    this.metrics = metrics;
    this.states = new AlertStates(rules, startMs, maxSources, known);
    this.metricNames = this.states.metrics;
    this.commands = new AlertCommands(rules, (rule) => metrics.alert_command_failures.inc({ rule }), baseEnv);
  }

  /** Accepted rows ({source, ts_ms, received_ms, metrics, vals}), in the order they were accepted. */
  frames(rows) {
    const transitions = [];
    for (const row of rows) {
      const values = new Map();
      if (this.metricNames.size) {
        for (const [name, value] of unpackValues(row.metrics, row.vals)) {
          if (this.metricNames.has(name)) values.set(name, value);
        }
      }
      transitions.push(...this.states.frame(row.source, row.ts_ms, row.received_ms, values));
    }
    this.act(transitions);
  }

  tick(nowMs = Date.now()) {
    this.act(this.states.tick(nowMs));
  }

  /** The status page's seam: {source: [{rule, state, since}]} sorted by rule, since as ISO UTC or null. */
  alertStates() {
    const out = {};
    for (const [source, items] of this.states.states()) {
      out[source] = items.map(({ rule, state, sinceMs }) => ({ rule, state,
        since: sinceMs === null ? null : new Date(sinceMs).toISOString() }))
        .sort((a, b) => (a.rule < b.rule ? -1 : Number(a.rule > b.rule)));
    }
    return out;
  }

  stop() {
    this.commands.stop();
  }

  act(transitions) {
    for (const [rule, source] of this.states.takeForgotten()) this.metrics.alerts_firing.remove({ rule, source });
    for (const t of transitions) {
      const raised = t.state === FIRING;
      event(raised ? 'warning' : 'info', raised ? 'alert_raised' : 'alert_cleared', { rule: t.rule, source: t.source,
        kind: t.kind, metric: t.metric, value: t.value, threshold: t.threshold, at: t.at });
      this.metrics.alerts_firing.set({ rule: t.rule, source: t.source }, raised ? 1 : 0);
      this.commands.submit(t);
    }
  }
}
