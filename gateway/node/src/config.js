// The gateway's configuration: one TOML file, every key overridable from the environment.
//
// The keys, their types, defaults, rules and environment variables are gateway/contract/config.schema.json (read
// by config-schema.js); how values are read and refused is gateway/contract/config.md; the documented example is
// gateway/contract/telemetry-gateway.example.toml. Flags of `run` and `check` override the environment, which
// overrides the file. The resolved config is frozen: config.spool.fsync_interval_ms, config.serial.ports[0].baud ...

import { readFileSync, statSync } from 'node:fs';

import { parse as parseToml, TomlError } from 'smol-toml';

import { parseAlertRules } from './alert-rules.js';
import { ConfigError } from './config-error.js';
import { CREDENTIALS, SECTIONS } from './config-schema.js';
import { check, convert } from './config-values.js';
import { isTable, parsePortEntries, withBaud } from './serial-port-entries.js';
import { checkSigning } from './signing-config.js';

export { ConfigError } from './config-error.js';

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') Object.values(value).forEach(deepFreeze);
  return Object.freeze(value);
}

/** The config with every default: what an empty file resolves to. */
export const DEFAULTS = deepFreeze(Object.fromEntries(Object.entries(SECTIONS).map(([section, keys]) => [section,
  Object.fromEntries(Object.entries(keys).map(([key, declared]) => [key, structuredClone(declared.default)]))])));

const has = (table, name) => Object.prototype.hasOwnProperty.call(table, name);

/** The schema's cross_key rules on the TLS keys and [signing] (the port entries check their own). */
function checkCrossKey(config, origins) {
  checkSigning(config, origins);
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
  const unknown = Object.keys(data).filter((name) => !has(SECTIONS, name) && name !== 'alerts').sort();
  if (unknown.length) throw new ConfigError(unknown[0], 'unknown_section', `there is no [${unknown[0]}]`, inFile);
  const config = {};
  for (const [section, keys] of Object.entries(SECTIONS)) {
    const given = has(data, section) ? data[section] : {};
    if (!isTable(given)) throw new ConfigError(section, 'type', `[${section}] must be a table`, inFile);
    const unknownKeys = Object.keys(given).filter((name) => !has(keys, name)).sort();
    if (unknownKeys.length) {
      throw new ConfigError(`${section}.${unknownKeys[0]}`, 'unknown_key', `[${section}] has no key ${unknownKeys[0]}`,
        inFile);
    }
    const sectionOverrides = overrides?.[section] ?? {};
    const values = {};
    for (const [key, declared] of Object.entries(keys)) {
      const path = `${section}.${key}`;
      const envName = declared.env;
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
        values[key] = structuredClone(declared.default);
        continue;
      }
      origins.set(path, origin);
      values[key] = declared.type === 'ports' ? parsePortEntries(value, text, origin)
        : check(path, declared, convert(path, declared, value, text, origin), origin);
    }
    config[section] = values;
  }
  config.serial.ports = config.serial.ports.map((port) => withBaud(port, config.serial.baud));
  config.alerts = parseAlertRules(has(data, 'alerts') ? data.alerts : [], inFile); // [[alerts]]: file only
  checkCrossKey(config, origins);
  return deepFreeze(config);
}

/** The file system's reason in words: "no such file or directory" for ENOENT. */
function reason(error) {
  return /^[A-Z0-9_]+: ([^,]*)/.exec(error.message)?.[1] ?? error.message;
}

/** A file that is not TOML (or not UTF-8), in one line: the parser's words and where. */
class NotTomlError extends Error {
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
      throw new ConfigError('', 'unreadable', `cannot read config ${path}: ${reason(error)}`);
    }
  }
  return parseConfig(data, overrides, { env, file: path ?? '' });
}

/**
 * [username, password] from the schema's credentials variables, or from credentials_file (TOML: username =
 * "...", password = "..."), or null for none. Never from the command line, where `ps` shows them.
 */
export function checkCredentialsMode(cassandraConfig, env = process.env) {
  // At start, as for the keys file (signing.md): a credentials_file the group or others may use is a config error
  // naming the file, never its content. Its content is read at connect (a file missing now is that read's problem).
  const file = cassandraConfig.credentials_file;
  if (env[CREDENTIALS.username_env] || !file) return;
  let mode;
  try {
    ({ mode } = statSync(file));
  } catch {
    return;
  }
  if (mode & 0o077) {
    throw new ConfigError('cassandra.credentials_file', 'unreadable', `credentials_file ${file}: mode `
      + `${(mode & 0o7777).toString(8).padStart(4, '0')}: group or others may use it; chmod 600 it`);
  }
}

export function readCredentials(cassandraConfig, env = process.env) {
  if (env[CREDENTIALS.username_env]) return [env[CREDENTIALS.username_env], env[CREDENTIALS.password_env] ?? ''];
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
