// Operator logs: one line per event on stderr, key=value fields, repeated events rate-limited
// (gateway/contract/logs.md):
//   2024-05-01T12:00:00.123Z level=WARNING event=line_rejected input=/dev/ttyUSB0 reason=bad_crc line="$T1,..."

import { contractNumber } from './contract-constants.js';
import { RateLimit } from './rate-limit.js';
import { fieldText } from './text-forms.js';

/** The levels (the numbers order them; the names, upper-cased, are what a line says). */
const LEVELS = Object.freeze({ debug: 10, info: 20, warning: 30, error: 40, critical: 50 });

let threshold = LEVELS.warning; // until setupLogging() says otherwise
let sink = null; // null: process.stderr at the time of the call

/** The numeric level of a name (debug, info, warning, error, critical; any case), or throws. */
function levelNumber(name) {
  const level = LEVELS[String(name).toLowerCase()];
  if (level === undefined) throw new Error(`Unknown level: ${name}`);
  return level;
}

/**
 * Sends every event at `level` or above to `stream` (stderr by default), one line each.
 * @param {string} level debug, info, warning, error or critical (any case)
 * @param {{write(text: string): unknown}} [stream]
 */
export function setupLogging(level, stream = process.stderr) {
  threshold = levelNumber(level);
  sink = stream;
}

/** `event=<name> k=v ...`: fields in insertion order, absent ones left out, values quoted where they need it. */
export function message(name, fields = {}) {
  const parts = [`event=${name}`];
  for (const [key, value] of Object.entries(fields)) {
    const text = fieldText(value);
    if (text !== null) parts.push(`${key}=${text}`);
  }
  return parts.join(' ');
}

/**
 * Logs `<time> level=<LEVEL> event=<name> k=v ...` at `level` ('debug', 'info', 'warning', 'error', 'critical').
 * @param {string} level
 * @param {string} name
 * @param {Record<string, unknown>} [fields]
 */
export function event(level, name, fields = {}) {
  if (levelNumber(level) < threshold) return;
  (sink ?? process.stderr).write(`${new Date().toISOString()} level=${level.toUpperCase()} ${message(name, fields)}\n`);
}

/** Keys (often source names) remembered per event. */
const MAX_SLOTS = contractNumber('log_keys_max');
const INTERVAL_S = contractNumber('log_interval_ms') / 1000;
/** The interval of the events logs.md marks 60 s. */
export const LONG_INTERVAL_S = contractNumber('log_interval_long_ms') / 1000;
/** What a log line shows of a long value (logs.md, "Events"). */
export const LINE_SHOWN_BYTES = contractNumber('log_line_shown_bytes');
export const ERROR_CHARS = contractNumber('log_error_chars');
export const DETAIL_CHARS = contractNumber('log_detail_chars');

/**
 * At most one line per (event, key) per interval; the next line that gets through says how many were held back
 * (suppressed=N). The rule: rate-limit.js (logs.md, "Rate limiting"). Keys can come from the input (source names):
 * at most maxSlots are remembered per event, the others share the event's key `*`.
 */
export class RateLimitedLog {
  /**
   * @param {{intervalS?: number, maxSlots?: number, now?: () => number}} [options] now: a monotonic clock in
   *   seconds (tests give their own)
   */
  constructor({ intervalS = INTERVAL_S, maxSlots = MAX_SLOTS, now = () => performance.now() / 1000 } = {}) {
    this.limit = new RateLimit(intervalS, maxSlots);
    this.now = now;
  }

  /**
   * Logs like {@link event} unless this key's (fields.key, '' without; not itself logged) last line of this
   * event name went out less than the interval ago.
   * @param {string} level
   * @param {string} name
   * @param {Record<string, unknown>} [fields]
   */
  event(level, name, fields = {}) {
    const { key = '', ...rest } = fields;
    const held = this.limit.admit(this.now(), name, key);
    if (held === null) return;
    if (held) rest.suppressed = held;
    event(level, name, rest);
  }
}
