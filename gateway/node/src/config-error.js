// A configuration error as gateway/contract/config.md defines it: the key path, the rule broken, a sentence.
//
// The key path and the rule word are the portable part (the config vectors check them); the sentence and the
// origin are for the operator, with the values it quotes written as JSON (quote).

import { SCHEMA } from './config-schema.js';

/** The rule words an error names. */
export const RULES = Object.freeze(Object.keys(SCHEMA.rules));

export class ConfigError extends Error {
  /**
   * @param {string} key dotted key path ('' for the file as a whole)
   * @param {string} rule one of RULES
   * @param {string} text the explanation
   * @param {string} [origin] where the value came from: 'in FILE', 'from TELEMETRY_…', 'from the command line'
   */
  constructor(key, rule, text, origin = '') {
    if (!RULES.includes(rule)) throw new TypeError(`not a config rule: ${rule}`);
    super(formatConfigError(key, rule, text, origin));
    this.name = 'ConfigError';
    this.key = key;
    this.rule = rule;
    this.text = text;
    this.origin = origin;
  }

  toString() {
    return this.message;
  }
}

function formatConfigError(key, rule, text, origin) {
  const where = key ? ` at ${key}` : '';
  return `config error${where} [${rule}]: ${text}${origin ? ` (${origin})` : ''}`;
}

/** A config value in an error's sentence (config.md, Errors): as JSON; a number that is not finite as TOML
 * writes it (nan, inf, -inf); a whole number past 2^53 with all its digits; a TOML date as ISO 8601 text. */
export function quote(value) {
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'number' && !Number.isFinite(value)) {
    if (Number.isNaN(value)) return 'nan';
    return value > 0 ? 'inf' : '-inf';
  }
  return JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? Number(item) : item));
}
