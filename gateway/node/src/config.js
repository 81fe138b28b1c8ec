// The gateway's configuration: one TOML file, every key overridable from the environment.
//
// TELEMETRY_<SECTION>_<KEY> overrides [section] key (e.g. TELEMETRY_CASSANDRA_HOSTS=10.0.0.5,10.0.0.6);
// command-line flags override both. The rules (types, ranges, errors) are gateway/contract/config.md; the
// documented example is gateway/contract/telemetry-gateway.example.toml. The resolved config has the Python
// gateway's field names (config.spool.fsync_interval_ms, config.serial.ports[0].baud ...) and is frozen.

import { readFileSync } from 'node:fs';

import { parse as parseToml, TomlError } from 'smol-toml';

import { ConfigError, pyFloat, pyRepr } from './config-error.js';
import { BAUD_MAX, BAUD_MIN, isTable, parsePortEntries, wholeFromDigits, withBaud } from './serial-port-entries.js';

export { ConfigError } from './config-error.js';

export const CONSISTENCY_LEVELS = Object.freeze(['ONE', 'TWO', 'THREE', 'QUORUM', 'ALL', 'LOCAL_QUORUM',
  'EACH_QUORUM', 'LOCAL_ONE', 'ANY']);
export const LOG_LEVELS = Object.freeze(['debug', 'info', 'warning', 'error']);
const KEYSPACE_RE = /^[A-Za-z][A-Za-z0-9_]{0,47}$/; // an unquoted CQL name, as Cassandra limits keyspaces
const WHOLE_TEXT_RE = /^[+-]?[0-9]+$/; // numbers written in the environment or a flag
const NUMBER_TEXT_RE = /^[+-]?[0-9]+(?:\.[0-9]+)?$/;

// Every key with its default; the default's kind is the key's type. A whole number is marked by WHOLE_KEYS
// (JavaScript has one number type): the others are numbers that may have a fraction.
const DEFAULT_SECTIONS = {
  serial: { ports: [], baud: 115200, reopen_max_s: 10.0 }, // ports: each with its baud resolved
  // max_sources: per-source state (seqs, receipt stamps, metric labels) kept for this many, LRU
  decode: { duplicate_window_s: 10.0, max_sources: 1000 },
  time: { max_future_s: 60.0, max_age_days: 366.0 },
  spool: {
    path: '/var/lib/telemetry-gateway/spool.sqlite',
    fsync: 'deferred', // "deferred", "batch" or "interval" (spool.md, Durability)
    fsync_interval_ms: 1000,
    max_mb: 1024.0,
    when_full: 'pause', // "pause" or "drop_oldest"
  },
  cassandra: {
    hosts: ['127.0.0.1'],
    port: 9042,
    local_dc: 'datacenter1',
    keyspace: 'telemetry',
    consistency: 'LOCAL_QUORUM',
    credentials_file: '',
    tls_ca: '',
    tls_cert: '',
    tls_key: '',
    batch_rows: 250,
    max_in_flight: 32,
    request_timeout_s: 10.0,
    retry_max_s: 10.0,
  },
  metrics: { listen: '127.0.0.1:9108' }, // "" turns the HTTP endpoint off
  log: { level: 'info' },
};
const WHOLE_KEYS = new Set(['serial.baud', 'decode.max_sources', 'spool.fsync_interval_ms', 'cassandra.port',
  'cassandra.batch_rows', 'cassandra.max_in_flight']);

/** (section.key): [lowest, highest, lowest excluded]. Number keys not listed have no range. */
export const RANGES = Object.freeze({
  'serial.baud': [BAUD_MIN, BAUD_MAX, false],
  'serial.reopen_max_s': [0, 3600, true],
  'decode.duplicate_window_s': [0, 3600, false],
  'decode.max_sources': [1, 1_000_000, false],
  'time.max_future_s': [0, 86_400, false],
  'time.max_age_days': [0, 36_600, false],
  'spool.fsync_interval_ms': [1, 60_000, false],
  'spool.max_mb': [0, 1_048_576, true],
  'cassandra.port': [1, 65_535, false],
  'cassandra.batch_rows': [1, 5000, false],
  'cassandra.max_in_flight': [1, 1024, false],
  'cassandra.request_timeout_s': [0, 600, true],
  'cassandra.retry_max_s': [0, 3600, true],
});
export const CHOICES = Object.freeze({
  'spool.fsync': ['deferred', 'batch', 'interval'],
  'spool.when_full': ['pause', 'drop_oldest'],
  'cassandra.consistency': CONSISTENCY_LEVELS,
  'log.level': LOG_LEVELS,
});
const NON_EMPTY = ['spool.path', 'cassandra.hosts', 'cassandra.local_dc'];

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') Object.values(value).forEach(deepFreeze);
  return Object.freeze(value);
}

/** The config with every default: what an empty file resolves to. */
export const DEFAULTS = deepFreeze(structuredClone(DEFAULT_SECTIONS));

const has = (table, name) => Object.prototype.hasOwnProperty.call(table, name);

/** value as the type of the key's default. text: from the environment or a flag, where numbers and lists are
 * written as text; in the TOML file a number key needs a TOML number. */
function convert(key, value, defaultValue, text, origin) {
  if (Array.isArray(defaultValue)) {
    if (text && typeof value === 'string') return value.split(',').map((item) => item.trim()).filter((item) => item);
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return [...value];
    throw new ConfigError(key, 'type', `must be a list of strings, not ${pyRepr(value)}`, origin);
  }
  if (typeof defaultValue === 'number') {
    const whole = WHOLE_KEYS.has(key);
    const kind = whole ? 'a whole number' : 'a number';
    if (text && typeof value === 'string') {
      const trimmed = value.trim();
      if (!(whole ? WHOLE_TEXT_RE : NUMBER_TEXT_RE).test(trimmed)) {
        throw new ConfigError(key, 'type', `must be ${kind}, not ${pyRepr(value)}`, origin);
      }
      value = whole ? wholeFromDigits(trimmed) : Number(trimmed);
    }
    if (typeof value === 'bigint') value = whole ? value : Number(value); // a TOML integer past 2^53
    if (typeof value !== 'number' && typeof value !== 'bigint') { // booleans are never numbers
      throw new ConfigError(key, 'type', `must be ${kind}, not ${pyRepr(value)}`, origin);
    }
    if (typeof value === 'number' && !Number.isFinite(value)) { // TOML has nan and inf
      throw new ConfigError(key, 'range', `must be finite, not ${pyFloat(value)}`, origin);
    }
    if (whole && typeof value === 'number' && !Number.isInteger(value)) {
      throw new ConfigError(key, 'type', `must be a whole number, not ${pyRepr(value)}`, origin);
    }
    return value;
  }
  if (typeof value !== 'string') throw new ConfigError(key, 'type', `must be a string, not ${pyRepr(value)}`, origin);
  return value;
}

function show(key, value) {
  return typeof value === 'number' && !WHOLE_KEYS.has(key) ? pyFloat(value) : String(value);
}

/** The key's own rules (config.md); returns the value resolved (choices in their canonical case). */
function check(key, value, origin) {
  if (has(RANGES, key)) {
    const [low, high, lowExcluded] = RANGES[key];
    if (!(lowExcluded ? low < value : low <= value) || value > high) {
      const bounds = lowExcluded ? `more than ${low} and at most ${high}` : `${low}..${high}`;
      throw new ConfigError(key, 'range', `must be ${bounds}, not ${show(key, value)}`, origin);
    }
  }
  if (has(CHOICES, key)) {
    const canonical = CHOICES[key].find((choice) => choice.toLowerCase() === value.toLowerCase()); // any case
    if (canonical === undefined) {
      throw new ConfigError(key, 'choice', `must be one of ${CHOICES[key].join(', ')}, not ${pyRepr(value)}`, origin);
    }
    value = canonical;
  }
  if (NON_EMPTY.includes(key) && value.length === 0) {
    throw new ConfigError(key, 'required', 'must not be empty', origin);
  }
  if (key === 'cassandra.hosts' && !value.every((host) => host)) {
    throw new ConfigError(key, 'syntax', 'a contact point is empty', origin);
  }
  if (key === 'cassandra.keyspace' && !KEYSPACE_RE.test(value)) {
    throw new ConfigError(key, 'syntax', `${pyRepr(value)} is not a plain CQL name ([A-Za-z][A-Za-z0-9_]{0,47})`,
      origin);
  }
  if (key === 'metrics.listen' && value) {
    const colon = value.lastIndexOf(':');
    const port = value.slice(colon + 1);
    if (colon < 0 || !/^[0-9]+$/.test(port) || !(Number(port) >= 1 && Number(port) <= 65535)) {
      throw new ConfigError(key, 'syntax', `must be HOST:PORT (PORT 1..65535), or "" for none, not ${pyRepr(value)}`,
        origin);
    }
  }
  return value;
}

function checkTogether(config, origins) {
  const { cassandra } = config;
  if (Boolean(cassandra.tls_cert) !== Boolean(cassandra.tls_key)) {
    const missing = cassandra.tls_cert ? 'cassandra.tls_key' : 'cassandra.tls_cert';
    throw new ConfigError(missing, 'together', 'tls_cert and tls_key go together', origins.get(missing) ?? '');
  }
  if (cassandra.tls_cert && !cassandra.tls_ca) {
    throw new ConfigError('cassandra.tls_ca', 'required', "a client certificate (tls_cert) needs tls_ca, the CA the "
      + "node's certificate is verified against", origins.get('cassandra.tls_ca') ?? '');
  }
}

/**
 * The pure core: a parsed TOML document, then TELEMETRY_* environment, then overrides ({section: {key: value}}
 * from flags, values as text; serial.ports a list of "PATH[@BAUD]") → the resolved, frozen config, or throws
 * the first ConfigError.
 * @param {object} data the TOML document (smol-toml's parse)
 * @param {object} [overrides]
 * @param {{env?: object, file?: string}} [options] env: the environment (default process.env); file: the
 *   file's name, for the errors' origin
 */
export function parseConfig(data, overrides = {}, { env = process.env, file = '' } = {}) {
  const inFile = file ? `in ${file}` : '';
  const origins = new Map();
  const unknown = Object.keys(data).filter((name) => !has(DEFAULT_SECTIONS, name)).sort();
  if (unknown.length) throw new ConfigError(unknown[0], 'unknown_section', `there is no [${unknown[0]}]`, inFile);
  const config = {};
  for (const [section, defaults] of Object.entries(DEFAULT_SECTIONS)) {
    const given = has(data, section) ? data[section] : {};
    if (!isTable(given)) throw new ConfigError(section, 'type', `[${section}] must be a table`, inFile);
    const unknownKeys = Object.keys(given).filter((name) => !has(defaults, name)).sort();
    if (unknownKeys.length) {
      throw new ConfigError(`${section}.${unknownKeys[0]}`, 'unknown_key', `[${section}] has no key ${unknownKeys[0]}`,
        inFile);
    }
    const sectionOverrides = overrides?.[section] ?? {};
    const values = {};
    for (const [key, defaultValue] of Object.entries(defaults)) {
      const path = `${section}.${key}`;
      const envName = `TELEMETRY_${section.toUpperCase()}_${key.toUpperCase()}`;
      let value;
      let text;
      let origin;
      if (has(sectionOverrides, key) && sectionOverrides[key] !== undefined) {
        [value, text, origin] = [sectionOverrides[key], true, 'from the command line'];
      } else if (has(env, envName) && env[envName] !== undefined) {
        [value, text, origin] = [env[envName], true, `from ${envName}`]; // set but empty counts as set
      } else if (has(given, key)) {
        [value, text, origin] = [given[key], false, inFile];
      } else {
        values[key] = structuredClone(defaultValue);
        continue;
      }
      origins.set(path, origin);
      values[key] = path === 'serial.ports' ? parsePortEntries(value, text, origin)
        : check(path, convert(path, value, defaultValue, text, origin), origin);
    }
    config[section] = values;
  }
  config.serial.ports = config.serial.ports.map((port) => withBaud(port, config.serial.baud));
  checkTogether(config, origins);
  return deepFreeze(config);
}

// What Python's OSError.strerror says for the usual failures; others keep libuv's words.
const STRERROR = {
  ENOENT: 'No such file or directory', EACCES: 'Permission denied', EISDIR: 'Is a directory',
  ENOTDIR: 'Not a directory', ELOOP: 'Too many levels of symbolic links', EPERM: 'Operation not permitted',
};

function strerror(error) {
  const described = /^[A-Z0-9_]+: ([^,]*)/.exec(error.message)?.[1] ?? error.message;
  return STRERROR[error.code] ?? described.charAt(0).toUpperCase() + described.slice(1);
}

/** A file that is not TOML (or not UTF-8), in one line: the parser's words and where. */
export class NotTomlError extends Error {
  constructor(message) {
    super(message);
    this.name = 'NotTomlError';
  }
}

/** A TOML file's document (integers past 2^53 as BigInt); NotTomlError when it is not TOML, the file system's
 * error when it cannot be read. */
export function readToml(path) {
  const bytes = readFileSync(path);
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new NotTomlError('Not UTF-8 text');
  }
  try {
    return parseToml(text, { integersAsBigInt: 'asNeeded' });
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const words = error.message.split('\n')[0].replace(/^Invalid TOML document: /, '');
    throw new NotTomlError(`${words.charAt(0).toUpperCase()}${words.slice(1)} (at line ${error.line}, column ${
      error.column})`);
  }
}

/**
 * The file (if any; null for none), then TELEMETRY_* environment, then overrides (as parseConfig).
 * @param {string|null} path
 */
export function loadConfig(path, overrides = {}, { env = process.env } = {}) {
  let data = {};
  if (path !== null && path !== undefined) {
    try {
      data = readToml(path);
    } catch (error) {
      if (error instanceof NotTomlError) {
        throw new ConfigError('', 'toml_syntax', `config ${path} is not valid TOML: ${error.message}`);
      }
      if (typeof error?.code !== 'string') throw error;
      throw new ConfigError('', 'unreadable', `cannot read config ${path}: ${strerror(error)}`);
    }
  }
  return parseConfig(data, overrides, { env, file: path ?? '' });
}

/**
 * [username, password] from TELEMETRY_CASSANDRA_USERNAME/_PASSWORD, or from credentials_file (TOML: username =
 * "...", password = "..."), or null for none. Never from the command line, where `ps` shows them.
 */
export function readCredentials(cassandraConfig, env = process.env) {
  if (env.TELEMETRY_CASSANDRA_USERNAME) {
    return [env.TELEMETRY_CASSANDRA_USERNAME, env.TELEMETRY_CASSANDRA_PASSWORD ?? ''];
  }
  const file = cassandraConfig.credentials_file;
  if (!file) return null;
  let data;
  try {
    data = readToml(file);
  } catch (error) {
    if (!(error instanceof NotTomlError) && typeof error?.code !== 'string') throw error;
    throw new ConfigError('cassandra.credentials_file', 'unreadable',
      `cannot read credentials_file ${file}: ${error.message}`);
  }
  if (typeof data.username !== 'string' || typeof data.password !== 'string') {
    throw new ConfigError('cassandra.credentials_file', 'required',
      `credentials_file ${file} needs username and password strings`);
  }
  return [data.username, data.password];
}
