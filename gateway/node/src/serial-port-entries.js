// [serial] ports entries (gateway/contract/config.md): "PATH", "PATH@BAUD", or a table that may make the port a
// CSV port (the room board's `light,temperature` lines, PROTOCOL.md section 7).
//
// A port is {path, baud, format, source, columns}; baud is null until withBaud() fills in [serial] baud.

import { ConfigError, quote } from './config-error.js';
import { PORT_TABLE } from './config-schema.js';
import { isMetricKey, isSourceName } from './protocol.js';

/** auto: v1 frames, status lines and legacy JSON, told apart per line; csv: the room board's lines. */
const FORMATS = Object.freeze([...PORT_TABLE.format.choices]);
const BAUD_MIN = PORT_TABLE.baud.min;
const BAUD_MAX = PORT_TABLE.baud.max;
const PATH_AT_BAUD_RE = /^([^@]+)(?:@([0-9]+))?$/;
const TABLE_KEYS = Object.freeze(Object.keys(PORT_TABLE));

/** A TOML table (smol-toml's tables have no prototype; dates are objects too). */
export function isTable(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);
}

function port(path, baud = null, format = 'auto', source = '', columns = [], trusted = false) {
  return { path, baud, format, source, columns, trusted };
}

/**
 * The ports of a [serial] ports value. text: the value came from the environment or a flag (comma-separated,
 * or a list of strings), where only string entries exist.
 */
export function parsePortEntries(value, text, origin) {
  if (text && typeof value === 'string') {
    value = value.split(',').map((item) => item.trim()).filter((item) => item);
  }
  if (!Array.isArray(value)) {
    throw new ConfigError('serial.ports', 'type', `must be a list of ports, not ${quote(value)}`, origin);
  }
  const ports = [];
  value.forEach((item, index) => {
    const key = `serial.ports[${index}]`;
    let entry;
    if (typeof item === 'string') entry = fromString(item, key, origin);
    else if (isTable(item) && !text) entry = fromTable(item, key, origin);
    else {
      throw new ConfigError(key, 'type', `must be "PATH", "PATH@BAUD" or a table, not ${quote(item)}`, origin);
    }
    checkDistinct(entry, ports, key, isTable(item), origin);
    ports.push(entry);
  });
  return ports;
}

function fromString(item, key, origin) {
  const match = PATH_AT_BAUD_RE.exec(item);
  if (match === null) throw new ConfigError(key, 'syntax', `${quote(item)} is not "PATH" or "PATH@BAUD"`, origin);
  if (match[2] === undefined) return port(match[1]);
  const baud = wholeFromDigits(match[2]);
  checkBaud(baud, key, origin);
  return port(match[1], baud);
}

function fromTable(item, key, origin) {
  for (const name of Object.keys(item)) {
    if (!TABLE_KEYS.includes(name)) {
      throw new ConfigError(`${key}.${name}`, 'unknown_key', `a port table has ${TABLE_KEYS.join(', ')}`, origin);
    }
  }
  const { path } = item;
  if (path === undefined || path === '') {
    throw new ConfigError(`${key}.path`, 'required', 'a port table needs a path', origin);
  }
  if (typeof path !== 'string') {
    throw new ConfigError(`${key}.path`, 'type', `must be a string, not ${quote(path)}`, origin);
  }
  let { baud = null } = item;
  if (baud !== null) {
    const whole = typeof baud === 'bigint' || (typeof baud === 'number' && Number.isInteger(baud));
    if (!whole) throw new ConfigError(`${key}.baud`, 'type', `must be a whole number, not ${quote(baud)}`, origin);
    checkBaud(baud, `${key}.baud`, origin);
    baud = Number(baud);
  }
  const form = has(item, 'format') ? item.format : 'auto';
  if (typeof form !== 'string' || !FORMATS.includes(form.toLowerCase())) { // case-insensitive, as every choice
    throw new ConfigError(`${key}.format`, 'choice', `must be one of ${FORMATS.join(', ')}, not ${quote(form)}`,
      origin);
  }
  // signing.md, "Trusted inputs": the room board's CSV has no signed form and names no source, so trusted by default
  const trusted = has(item, 'trusted') ? item.trusted : form.toLowerCase() === 'csv';
  if (typeof trusted !== 'boolean') {
    throw new ConfigError(`${key}.trusted`, 'type', `must be true or false, not ${quote(trusted)}`, origin);
  }
  if (form.toLowerCase() === 'auto') {
    for (const name of ['source', 'columns']) {
      if (has(item, name)) {
        throw new ConfigError(`${key}.${name}`, 'conflict', `only a format = "csv" port has ${name}`, origin);
      }
    }
    return port(path, baud, 'auto', '', [], trusted);
  }
  return port(path, baud, 'csv', csvSource(item, key, origin), csvColumns(item, key, origin), trusted);
}

function csvSource(item, key, origin) {
  const { source } = item;
  if (source === undefined) {
    throw new ConfigError(`${key}.source`, 'required', 'a csv port needs the source its lines are stored under',
      origin);
  }
  if (!isSourceName(source)) {
    throw new ConfigError(`${key}.source`, 'syntax', `${quote(source)} is not a source name ([A-Za-z0-9_-]{1,32})`,
      origin);
  }
  return source;
}

function csvColumns(item, key, origin) {
  const { columns } = item;
  if (columns === undefined || (Array.isArray(columns) && columns.length === 0)) {
    throw new ConfigError(`${key}.columns`, 'required', 'a csv port needs the metric name of each field', origin);
  }
  if (!Array.isArray(columns)) {
    throw new ConfigError(`${key}.columns`, 'type', `must be a list of metric names, not ${quote(columns)}`, origin);
  }
  columns.forEach((column, index) => {
    const where = `${key}.columns[${index}]`;
    if (!isMetricKey(column)) {
      throw new ConfigError(where, 'syntax', `${quote(column)} is not a metric name ([a-z][a-z0-9_]{0,15}, not t)`,
        origin);
    }
    if (columns.slice(0, index).includes(column)) {
      throw new ConfigError(where, 'distinct', `${quote(column)} is listed twice`, origin);
    }
  });
  return [...columns];
}

function checkBaud(baud, key, origin) {
  if (!(BAUD_MIN <= baud && baud <= BAUD_MAX)) { // baud may be a BigInt: it compares with numbers
    throw new ConfigError(key, 'range', `baud must be ${BAUD_MIN}..${BAUD_MAX}, not ${baud}`, origin);
  }
}

/** One device read by two entries would split its lines between two readers; two CSV ports with one source
 * would interleave two boards' readings under one name. */
function checkDistinct(entry, earlier, key, table, origin) {
  if (earlier.some((other) => other.path === entry.path)) {
    throw new ConfigError(table ? `${key}.path` : key, 'distinct', `${entry.path} is listed twice`, origin);
  }
  if (entry.format === 'csv' && earlier.some((o) => o.format === 'csv' && o.source === entry.source)) {
    throw new ConfigError(`${key}.source`, 'distinct', `another csv port already stores as ${quote(entry.source)}`,
      origin);
  }
}

/** The port with [serial] baud when it gave none. */
export function withBaud(entry, defaultBaud) {
  return entry.baud !== null ? entry : { ...entry, baud: defaultBaud };
}

/** Digits as a number, or a BigInt past 2^53 (so a huge value is reported as written). */
export function wholeFromDigits(text) {
  const number = Number(text);
  return Number.isSafeInteger(number) ? number : BigInt(text.trim());
}

function has(table, name) {
  return Object.prototype.hasOwnProperty.call(table, name);
}
