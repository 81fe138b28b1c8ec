// Operator logs: one line per event, key=value fields, repeated events rate-limited. Line for line the Python
// gateway's (telemetry_gateway/logs.py: logging.Formatter("%(asctime)s level=%(levelname)s %(message)s") on
// stderr), so the two gateways' logs read and grep the same:
//   2024-05-01 12:00:00,123 level=WARNING event=line_rejected input=/dev/ttyUSB0 reason=bad_crc line='$T1,...'

/** Python's logging levels (the numbers order them; the names are what a line says). */
const LEVELS = Object.freeze({ debug: 10, info: 20, warning: 30, error: 40, critical: 50 });
const WARNING = LEVELS.warning;

// Python's root logger before setup_logging: level WARNING and no handler, so logging's "last resort" handler
// writes the bare message (no time, no level) to stderr. Kept until setupLogging() says otherwise.
let threshold = WARNING;
let sink = null; // null: the last resort (message only, on process.stderr at the time of the call)

/** The numeric level of a name (debug, info, warning, error, critical; any case), or throws. */
export function levelNumber(name) {
  const level = LEVELS[String(name).toLowerCase()];
  if (level === undefined) throw new Error(`Unknown level: ${pythonAscii(String(name).toUpperCase())}`);
  return level;
}

/**
 * Sends every event at `level` or above to `stream` (stderr by default), one formatted line each: Python's
 * setup_logging(level).
 * @param {string} level debug, info, warning, error or critical (any case)
 * @param {{write(text: string): unknown}} [stream]
 */
export function setupLogging(level, stream = process.stderr) {
  threshold = levelNumber(level);
  sink = stream;
}

/** True when an event at `level` would be written. */
export function enabled(level) {
  return levelNumber(level) >= threshold;
}

/**
 * Logs `event=<name> k=v ...` at `level` ('debug', 'info', 'warning', 'error', 'critical'); fields in their
 * insertion order, each value as Python's str() would render it, quoted and escaped by {@link field}.
 * @param {string} level
 * @param {string} name
 * @param {Record<string, unknown>} [fields]
 */
export function event(level, name, fields = {}) {
  const number = levelNumber(level);
  if (number < threshold) return;
  const message = [`event=${name}`, ...Object.entries(fields).map(([k, v]) => `${k}=${field(v)}`)].join(' ');
  if (sink === null) {
    process.stderr.write(`${message}\n`);
    return;
  }
  sink.write(`${asctime(new Date())} level=${level.toUpperCase()} ${message}\n`);
}

/** Python logging's default %(asctime)s: local time, "YYYY-MM-DD HH:MM:SS,mmm". */
export function asctime(date) {
  const two = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} `
    + `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())},`
    + String(date.getMilliseconds()).padStart(3, '0');
}

// Printable ASCII without the characters that would make a field ambiguous: space, '=', '"', "'".
const PLAIN_RE = /^[\x21-\x7e]+$/;
const AMBIGUOUS_RE = /[="']/;

/**
 * A field's value as written: plain when it is non-empty printable ASCII without space, '=' or quotes; else
 * Python's ascii() of it (quoted, every control or non-ASCII character escaped: \x1b, \x00, \xff), so bytes from
 * a serial line never reach a terminal or the journal raw.
 */
export function field(value) {
  const text = pythonStr(value);
  if (PLAIN_RE.test(text) && !AMBIGUOUS_RE.test(text)) return text;
  return pythonAscii(text);
}

/**
 * Python's str() of a JS value as the Python gateway would have it: true -> True, null -> None, 1e-05, inf.
 * A JS number with an integer value renders as an int: JS cannot tell 3.0 from 3.
 */
export function pythonStr(value) {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'number') return pythonNumber(value);
  return String(value);
}

function pythonNumber(x) {
  if (Number.isInteger(x)) return BigInt(x).toString(); // no exponent, no -0
  return pythonFloatRepr(x);
}

/** Python's repr() of a float: 1.0, 0.5, 1e-05, 1e+16, inf, nan (JS: 1, 0.5, 0.00001, 10000000000000000). */
export function pythonFloatRepr(x) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (Object.is(x, -0)) return '-0.0';
  // The shortest round-tripping digits, as JS's, but in exponent form below 1e-4 and from 1e16 on (JS: below
  // 1e-6, from 1e21 on), with at least two exponent digits; an integer value keeps a ".0".
  const [mantissa, exponent] = x.toExponential().split('e');
  const power = Number(exponent);
  if (power < -4 || power >= 16) {
    return `${mantissa}e${power < 0 ? '-' : '+'}${String(Math.abs(power)).padStart(2, '0')}`;
  }
  return Number.isInteger(x) ? `${x}.0` : String(x);
}

const hex = (code, width) => code.toString(16).padStart(width, '0');

/** Python's ascii(text): repr()'s quoting, with every non-ASCII code point as \xhh, \uhhhh or \Uhhhhhhhh. */
export function pythonAscii(text) {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) { // by code point; a lone surrogate is one (Python: '\ud800')
    const code = char.codePointAt(0);
    if (char === quote || char === '\\') out += `\\${char}`;
    else if (char === '\t') out += '\\t';
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (code < 0x20 || code === 0x7f) out += `\\x${hex(code, 2)}`;
    else if (code < 0x7f) out += char;
    else if (code <= 0xff) out += `\\x${hex(code, 2)}`;
    else if (code <= 0xffff) out += `\\u${hex(code, 4)}`;
    else out += `\\U${hex(code, 8)}`;
  }
  return out + quote;
}

/** Keys (often source names) remembered by one RateLimitedLog. */
export const MAX_SLOTS = 2048;

/**
 * At most one line per key per interval; the next line that gets through says how many were held back
 * (suppressed=N).
 *
 * Keys can come from the input (source names), so their number is bounded: at maxSlots the slots past their
 * interval are forgotten, and while every slot is still live, new keys share one slot per event name.
 */
export class RateLimitedLog {
  /**
   * @param {{intervalS?: number, maxSlots?: number, now?: () => number}} [options] now: a monotonic clock in
   *   seconds (tests give their own)
   */
  constructor({ intervalS = 10, maxSlots = MAX_SLOTS, now = () => performance.now() / 1000 } = {}) {
    this.interval = intervalS;
    this.maxSlots = maxSlots;
    this.now = now;
    this.last = new Map(); // slot -> when its last line went out
    this.held = new Map(); // slot -> lines held back since
    this.pruneAfter = 0; // a full table is scanned at most every quarter interval
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
    let slot = `${name}/${key}`;
    const now = this.now();
    if (!this.last.has(slot) && this.last.size >= this.maxSlots) {
      if (now >= this.pruneAfter) this.forgetExpired(now);
      if (this.last.size >= this.maxSlots) slot = `${name}/*`;
    }
    if (now - (this.last.get(slot) ?? -1e9) < this.interval) {
      this.held.set(slot, (this.held.get(slot) ?? 0) + 1);
      return;
    }
    this.last.set(slot, now);
    const held = this.held.get(slot) ?? 0;
    this.held.delete(slot);
    if (held) rest.suppressed = held;
    event(level, name, rest);
  }

  /** Slots whose interval is over say nothing any more but how many lines they held back: dropped. */
  forgetExpired(now) {
    for (const [slot, last] of this.last) {
      if (now - last >= this.interval) this.last.delete(slot);
    }
    for (const slot of this.held.keys()) {
      if (!this.last.has(slot)) this.held.delete(slot);
    }
    this.pruneAfter = now + this.interval / 4;
  }
}
