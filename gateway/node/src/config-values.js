// One config value against its declaration in config.schema.json: its type (convert), then its own rules (check).
// Used for section keys and for the keys of an [[alerts]] table.

import { ConfigError, quote } from './config-error.js';
import { wholeFromDigits } from './serial-port-entries.js';

const WHOLE_TEXT_RE = /^[+-]?[0-9]+$/; // numbers written in the environment or a flag
const NUMBER_TEXT_RE = /^[+-]?[0-9]+(?:\.[0-9]+)?$/;
const has = (table, name) => Object.prototype.hasOwnProperty.call(table, name);

/** value as the key's type. text: from the environment or a flag, where numbers and lists are written as text;
 * in the TOML file a number key needs a TOML number. */
export function convert(key, declared, value, text, origin) {
  const { type } = declared;
  if (type === 'strings') {
    if (text && typeof value === 'string') return value.split(',').map((item) => item.trim()).filter((item) => item);
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return [...value];
    throw new ConfigError(key, 'type', `must be a list of strings, not ${quote(value)}`, origin);
  }
  if (type === 'whole' || type === 'number') {
    const whole = type === 'whole';
    const kind = whole ? 'a whole number' : 'a number';
    if (text && typeof value === 'string') {
      const trimmed = value.trim();
      if (!(whole ? WHOLE_TEXT_RE : NUMBER_TEXT_RE).test(trimmed)) {
        throw new ConfigError(key, 'type', `must be ${kind}, not ${quote(value)}`, origin);
      }
      value = whole ? wholeFromDigits(trimmed) : Number(trimmed);
    }
    if (typeof value === 'bigint') value = whole ? value : Number(value); // a TOML integer past 2^53
    if (typeof value !== 'number' && typeof value !== 'bigint') { // booleans are never numbers
      throw new ConfigError(key, 'type', `must be ${kind}, not ${quote(value)}`, origin);
    }
    if (typeof value === 'number' && !Number.isFinite(value)) { // TOML has nan and inf
      throw new ConfigError(key, 'range', `must be finite, not ${quote(value)}`, origin);
    }
    if (whole && typeof value === 'number' && !Number.isInteger(value)) {
      throw new ConfigError(key, 'type', `must be a whole number, not ${quote(value)}`, origin);
    }
    return value;
  }
  if (typeof value !== 'string') throw new ConfigError(key, 'type', `must be a string, not ${quote(value)}`, origin);
  return value;
}

/** The key's own rules from the schema; returns the value resolved (a choice in the case declared). */
export function check(key, declared, value, origin) {
  const above = has(declared, 'above');
  const low = above ? declared.above : declared.min;
  const high = declared.max;
  if ((low !== undefined && !(above ? low < value : low <= value)) || (high !== undefined && value > high)) {
    const bounds = above ? `more than ${low} and at most ${high}` : `${low}..${high}`;
    throw new ConfigError(key, 'range', `must be ${bounds}, not ${quote(value)}`, origin);
  }
  if (has(declared, 'choices')) {
    const canonical = declared.choices.find((choice) => choice.toLowerCase() === value.toLowerCase()); // any case
    if (canonical === undefined) {
      throw new ConfigError(key, 'choice', `must be one of ${declared.choices.join(', ')}, not ${quote(value)}`,
        origin);
    }
    value = canonical;
  }
  if (declared.not_empty && value.length === 0) throw new ConfigError(key, 'required', 'must not be empty', origin);
  if (declared.items_not_empty && !value.every((item) => item)) {
    throw new ConfigError(key, 'syntax', 'an item is empty', origin);
  }
  if (has(declared, 'item_pattern')) {
    const pattern = new RegExp(`^(?:${declared.item_pattern})$`);
    value.forEach((item, index) => {
      if (!pattern.test(item)) {
        throw new ConfigError(`${key}[${index}]`, 'syntax', `${quote(item)} does not match ${declared.item_pattern}`,
          origin);
      }
    });
  }
  if (has(declared, 'pattern') && !new RegExp(`^(?:${declared.pattern})$`).test(value)) {
    throw new ConfigError(key, 'syntax', `${quote(value)} does not match ${declared.pattern}`, origin);
  }
  if (declared.form === 'host_port' && value) {
    const colon = value.lastIndexOf(':');
    const port = value.slice(colon + 1);
    if (colon < 0 || !/^[0-9]+$/.test(port) || !(Number(port) >= 1 && Number(port) <= 65535)) {
      throw new ConfigError(key, 'syntax', `must be HOST:PORT (PORT 1..65535), or "" for none, not ${quote(value)}`,
        origin);
    }
  }
  return value;
}
