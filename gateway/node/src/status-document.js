// The /status.json document (gateway/contract/status.md, status.schema.json) from what the gateway knows at one
// moment: a pure function, so both its shape and its rules are unit-tested without a running gateway.

import { byCodePoint, isStale } from './status-tally.js';

/** Unix ms → 2026-11-26T09:30:00.123Z. */
function isoMs(ms) {
  return new Date(ms).toISOString();
}

/**
 * @param {{version: string, implementation: string, policy: string, startedMs: number, staleAfterS: number}} facts
 * @param {{nowMs: number, rejects: Map<string, number>, spoolFrames: number, heldFrames: number,
 *   oldestUnsentMs: number|null, cassandraUp: boolean, lastError: [string, number]|null}} moment
 * @param {object[]} sources SourceTally.view()'s
 * @param {Map<string, object[]>} alerts source → its rule states (status.schema.json's alerts items)
 * @param {Map<string, string>} units metric → unit (metric-units.json)
 * @param {Map<string, object[]>} series SeriesTally.view()'s: source → [{metric, points}]
 */
export function statusDocument(facts, moment, sources, alerts, units, series = new Map()) {
  const now = moment.nowMs;
  const views = new Map(sources.map((view) => [view.source, view]));
  for (const source of alerts.keys()) { // a source only a rule knows (silent since start): shown, with nothing read
    if (!views.has(source)) {
      views.set(source, { source, lastReceivedMs: null, valuesTsMs: null, values: [], framesPerMinute: 0,
        seqGaps: 0, duplicates: 0, rejects: {}, refusedBurst: false });
    }
  }
  const ages = (ms) => Math.max(0, now - ms) / 1000;
  return {
    gateway: { version: facts.version, implementation: facts.implementation, policy: facts.policy,
      started: isoMs(facts.startedMs), uptime_s: ages(facts.startedMs) },
    now: isoMs(now),
    stale_after_s: facts.staleAfterS,
    sources: [...views.keys()].sort(byCodePoint).map((name) => sourceEntry(views.get(name), now,
      facts.staleAfterS * 1000, alerts.get(name) ?? [], units, series.get(name) ?? [])),
    rejects: Object.fromEntries([...moment.rejects].filter(([, count]) => count > 0)
      .sort(([a], [b]) => byCodePoint(a, b))),
    spool: { frames: moment.spoolFrames, held_frames: moment.heldFrames,
      oldest_unsent_age_s: moment.oldestUnsentMs === null ? null : ages(moment.oldestUnsentMs) },
    cassandra: { state: moment.cassandraUp ? 'up' : 'down',
      last_error: moment.lastError === null ? null : { kind: moment.lastError[0], at: isoMs(moment.lastError[1]) } },
  };
}

function sourceEntry(view, nowMs, staleAfterMs, alerts, units, series) {
  const last = view.lastReceivedMs;
  return {
    source: view.source,
    last_frame: last === null ? null : isoMs(last),
    age_s: last === null ? null : Math.max(0, nowMs - last) / 1000,
    stale: isStale(last, nowMs, staleAfterMs),
    values_at: view.valuesTsMs === null ? null : isoMs(view.valuesTsMs),
    values: view.values.map(([metric, value]) => ({ metric, value, unit: units.get(metric) ?? null })),
    frames_per_minute: view.framesPerMinute,
    seq_gaps: view.seqGaps,
    duplicates: view.duplicates,
    rejects: { ...view.rejects },
    refused_burst: view.refusedBurst,
    alerts: alerts.map((item) => ({ ...item })).sort((a, b) => byCodePoint(a.rule, b.rule)),
    series: series.map(({ metric, points }) => ({ metric,
      points: points.map(([at, low, high, last]) => [isoMs(at), low, high, last]) })),
  };
}
