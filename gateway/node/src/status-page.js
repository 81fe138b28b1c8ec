// The status page's data at request time (gateway/contract/status.md): the shell around status-document.js,
// reading the tally, the spool, the sender and the metrics of the running gateway.

import { readFileSync } from 'node:fs';

import { DEFAULTS } from './config.js';
import { health } from './healthz.js';
import { statusDocument } from './status-document.js';

export const UNITS = new Map(Object.entries(
  JSON.parse(readFileSync(new URL('../contract/metric-units.json', import.meta.url), 'utf8')).units,
));
export const PAGE = readFileSync(new URL('../contract/status.html', import.meta.url));

/** A Map (or plain object) of source → alert items, as a Map. */
function asMap(states) {
  return states instanceof Map ? states : new Map(Object.entries(states ?? {}));
}

export class StatusPage {
  /**
   * @param {{version, implementation, policy, startedMs, staleAfterS}} facts
   * @param {{tally, spool, lastError: () => ([string, number]|null), metrics,
   *   alertStates?: () => (Map<string, object[]>|object), metricsConfig?: object, downSince?: () => (number|null)}}
   *   parts alertStates: the seam the alert rules fill (status.md, "Alert states"): source → its rule states;
   *   none by default. metricsConfig: [metrics], /healthz's thresholds. downSince: the sender's, since when
   *   Cassandra is down
   */
  constructor(facts, { tally, spool, lastError, metrics, alertStates = () => new Map(),
    metricsConfig = DEFAULTS.metrics, downSince = () => null }) {
    Object.assign(this, { facts, tally, spool, lastError, metrics, alertStates, metricsConfig, downSince });
  }

  async document() {
    const nowMs = Date.now();
    const rejects = new Map((await this.metrics.rejects.get()).values.map((v) => [v.labels.reason, v.value]));
    const up = (await this.metrics.cassandra_up.get()).values[0]?.value === 1;
    const moment = { nowMs, rejects, spoolFrames: this.spool.depth, heldFrames: this.spool.heldFrames,
      oldestUnsentMs: this.oldest(), cassandraUp: up, lastError: this.lastError() };
    return statusDocument(this.facts, moment, this.tally.view(nowMs), asMap(this.alertStates()), UNITS,
      this.tally.series.view(nowMs));
  }

  /** /healthz: [200, 'ok'] or [503, the first failed check's reason]. */
  health() {
    const seen = [...this.tally.lastSeenMs().values()];
    const config = this.metricsConfig;
    return health({ nowMs: Date.now(), startedMs: this.facts.startedMs, cassandraDownSinceMs: this.downSince(),
      oldestUnsentMs: this.oldest(), newestFrameMs: seen.length ? Math.max(...seen) : null },
    { cassandraDownMs: config.healthz_cassandra_down_s * 1000, spoolLagMs: config.healthz_spool_lag_s * 1000,
      silentMs: config.stale_after_s * 1000 });
  }

  oldest() {
    try {
      return this.spool.oldestReceivedMs();
    } catch {
      return null; // the spool closing at stop
    }
  }
}
