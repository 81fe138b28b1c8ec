// Prometheus metrics of one gateway (own registry, so tests can run several gateways in a process), declared from
// the contract: gateway/contract/metrics.json gives every family's name, type, help, labels and buckets; this file
// only gives each family its attribute. No default process_* families (not in the contract), and prom-client adds
// no <name>_created samples.

import { readFileSync } from 'node:fs';

import client from 'prom-client';

import { numberText } from './text-forms.js';

const { Counter, Gauge, Registry } = client;

/** metrics.json's families by name, read at load time from the contract beside this package. */
const FAMILIES = new Map(
  JSON.parse(readFileSync(new URL('../contract/metrics.json', import.meta.url), 'utf8')).metrics
    .map((family) => [family.name, family]),
);
const PREFIX = 'telemetry_gateway_';

function family(name) {
  const found = FAMILIES.get(PREFIX + name);
  if (found === undefined) throw new Error(`metrics.json has no family ${PREFIX + name}`);
  return found;
}

/** Dense around the 50 ms delivery target, so its p99 is read from the histogram without a wide bucket to guess in. */
export const LATENCY_BUCKETS = Object.freeze([...family('delivery_latency_seconds').buckets]);

/** The contract's family PREFIX + name (a Counter, Gauge or CountedHistogram), registered in registry. */
function declare(name, registry) {
  const { name: fullName, type, help, labels, buckets } = family(name);
  const config = { name: fullName, help, labelNames: Object.keys(labels), registers: [registry] };
  if (type === 'counter') return new Counter(config); // named with its _total, as exposed
  if (type === 'gauge') return new Gauge(config);
  if (type === 'histogram' && config.labelNames.length === 0) return new CountedHistogram({ ...config, buckets });
  throw new Error(`metrics.json: ${fullName}: a ${type}${type === 'histogram' ? ' with labels' : ''} is not supported`);
}

/**
 * A Prometheus histogram (no labels) that takes many equal observations in one call.
 *
 * Every frame of a read shares its delivery latency; one observe() per frame would cost a bucket search per
 * frame. Exposed like prom-client's Histogram (<name>_bucket{le}, <name>_sum, <name>_count), but with the le
 * values in OpenMetrics' canonical form (le="1.0", not le="1": a label value names a series, so a dashboard's
 * {le="1.0"} finds both gateways' buckets). Registered through the registry's public registerMetric(), answering
 * get() as every prom-client metric does.
 */
export class CountedHistogram {
  /**
   * @param {{name: string, help: string, buckets: number[], registers?: import('prom-client').Registry[]}} config
   */
  constructor({ name, help, buckets, registers = [] }) {
    this.name = name;
    this.help = help;
    this.type = 'histogram';
    this.aggregator = 'sum';
    this.bounds = [...buckets].sort((a, b) => a - b);
    this.les = this.bounds.map(leText);
    this.reset();
    for (const registry of registers) registry.registerMetric(this);
  }

  reset() {
    this.counts = new Array(this.bounds.length + 1).fill(0); // the last: past every bound (+Inf only)
    this.sum = 0;
  }

  /** One observation of seconds. */
  observe(seconds) {
    this.observeMany(seconds, 1);
  }

  /** count observations of seconds: one bucket search, whatever the count. */
  observeMany(seconds, count) {
    this.counts[firstBoundAtLeast(this.bounds, seconds)] += count;
    this.sum += seconds * count;
  }

  /** The metric as prom-client's Registry reads it (the shape of Histogram.get()). */
  async get() {
    const bucket = `${this.name}_bucket`;
    const values = [];
    let cumulative = 0;
    this.bounds.forEach((_bound, i) => {
      cumulative += this.counts[i];
      values.push({ labels: { le: this.les[i] }, value: cumulative, metricName: bucket });
    });
    const total = cumulative + this.counts[this.bounds.length];
    values.push(
      { labels: { le: '+Inf' }, value: total, metricName: bucket },
      { labels: {}, value: this.sum, metricName: `${this.name}_sum` },
      { labels: {}, value: total, metricName: `${this.name}_count` },
    );
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}

/** A bucket bound as le says it: OpenMetrics' canonical form, a number with a fraction or an exponent (1.0). */
export function leText(x) {
  if (x === Infinity) return '+Inf';
  const text = numberText(x);
  return /[.eN]/.test(text) ? text : `${text}.0`;
}

/** The index of the first bound >= value (bounds.length past them all; NaN: 0). */
function firstBoundAtLeast(bounds, value) {
  let lo = 0;
  let hi = bounds.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (bounds[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A gateway's metrics: `registry` (its own prom-client Registry) and one attribute per family. Counters and
 * gauges are prom-client's (labels(...).inc(), inc({label: value}, n), set()); the histograms are {@link CountedHistogram}s (observe(), observeMany()).
 */
export function createMetrics() {
  const r = new Registry();
  return {
    registry: r,
    lines_read: declare('lines_read_total', r),
    status_lines: declare('status_lines_total', r),
    frames_accepted: declare('frames_accepted_total', r),
    rejects: declare('rejects_total', r),
    duplicates: declare('duplicates_total', r),
    seq_missing: declare('seq_missing_frames_total', r),
    board_restarts: declare('board_restarts_total', r),
    seq_conflicts: declare('seq_conflicts_total', r),
    sources_evicted: declare('sources_evicted_total', r),
    sources_tracked: declare('sources_tracked', r),
    time_refused: declare('explicit_time_refused_total', r),
    rows_written: declare('rows_written_total', r),
    frames_written: declare('frames_written_total', r),
    write_errors: declare('write_errors_total', r),
    requests_in_flight: declare('requests_in_flight', r),
    write_latency: declare('write_latency_seconds', r),
    delivery_latency: declare('delivery_latency_seconds', r),
    cassandra_up: declare('cassandra_up', r),
    input_up: declare('input_up', r),
    spool_frames: declare('spool_frames', r),
    spool_bytes: declare('spool_bytes', r),
    spool_full: declare('spool_full_total', r),
    reading_paused: declare('reading_paused', r),
    spool_dropped: declare('spool_dropped_frames_total', r),
    spool_damaged: declare('spool_damaged_total', r),
    spool_recovered_frames: declare('spool_recovered_frames_total', r),
    spool_invalid_frames: declare('spool_invalid_frames_total', r),
    spool_frames_committed: declare('spool_frames_committed_total', r),
    spool_holding: declare('spool_holding', r),
    frames_possibly_lost: declare('frames_possibly_lost_total', r),
    build_info: declare('build_info', r),
    last_seen: lastSeenGauge(r),
    alerts_firing: declare('alerts_firing', r),
    alert_command_failures: declare('alert_command_failures_total', r),
    http_refused: declare('http_refused_total', r),
  };
}

/** source_last_seen_seconds, read at each scrape from its read() (Map source → Unix ms; the status tally's), so
 * accepting a frame costs no gauge update. */
function lastSeenGauge(registry) {
  const { name, help, labels } = family('source_last_seen_seconds');
  const gauge = new Gauge({
    name, help, labelNames: Object.keys(labels), registers: [registry],
    collect() {
      this.reset();
      for (const [source, ms] of gauge.read()) this.set({ source }, ms / 1000);
    },
  });
  gauge.read = () => new Map();
  return gauge;
}
