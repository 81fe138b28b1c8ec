// [[alerts]] rules (gateway/contract/config.md, "[[alerts]] rules"): a threshold rule (metric below or above a
// value, for a while, with a clear_at band) or a silence rule (a source silent for silent_s). The keys' types and
// ranges come from the schema's alert_table; the rules that tie them together are here.
//
// A rule is {name, source, metric, below, above, clear_at, for_s, silent_s, command, command_timeout_s}, with
// null for an absent below, above or silent_s (and clear_at of a silence rule).

import { ConfigError, quote } from './config-error.js';
import { ALERT_TABLE } from './config-schema.js';
import { check, convert } from './config-values.js';
import { isMetricKey } from './protocol.js';
import { isTable } from './serial-port-entries.js';

const KINDS = Object.freeze(['below', 'above', 'silent_s']); // exactly one of them makes the rule
const THRESHOLD_ONLY = Object.freeze(Object.keys(ALERT_TABLE).filter((key) => ALERT_TABLE[key].threshold_only));
const DEFAULTS = Object.freeze({ source: '*', metric: '', below: null, above: null, clear_at: null, for_s: 0,
  silent_s: null, command: [], command_timeout_s: 10 });

/** below, above or silence: the word logs, vectors and ALERT_KIND use. */
export function kindOf(rule) {
  if (rule.silent_s !== null) return 'silence';
  return rule.below !== null ? 'below' : 'above';
}

/** The rule's below, above or silent_s. */
export function thresholdOf(rule) {
  return rule.below ?? rule.above ?? rule.silent_s;
}

/** The file's `alerts` (a list of tables) → the rules, or throws the first ConfigError. */
export function parseAlertRules(value, origin) {
  if (!Array.isArray(value)) {
    throw new ConfigError('alerts', 'type', `must be a list of [[alerts]] tables, not ${quote(value)}`, origin);
  }
  const rules = [];
  value.forEach((item, index) => {
    const key = `alerts[${index}]`;
    if (!isTable(item)) throw new ConfigError(key, 'type', `must be an [[alerts]] table, not ${quote(item)}`, origin);
    const rule = parseRule(item, key, origin);
    if (rules.some((other) => other.name === rule.name)) {
      throw new ConfigError(`${key}.name`, 'distinct', `another rule is named ${quote(rule.name)}`, origin);
    }
    rules.push(rule);
  });
  return rules;
}

function parseRule(item, key, origin) {
  for (const name of Object.keys(item)) {
    if (!Object.hasOwn(ALERT_TABLE, name)) {
      throw new ConfigError(`${key}.${name}`, 'unknown_key', `an alert table has ${Object.keys(ALERT_TABLE)
        .join(', ')}`, origin);
    }
  }
  const values = {};
  for (const [name, declared] of Object.entries(ALERT_TABLE)) {
    if (!Object.hasOwn(item, name)) continue;
    let value = check(`${key}.${name}`, declared, convert(`${key}.${name}`, declared, item[name], false, origin),
      origin);
    if (typeof value === 'bigint') value = Number(value);
    values[name] = value;
  }
  if (!values.name) throw new ConfigError(`${key}.name`, 'required', 'an alert rule needs a name', origin);
  const kinds = KINDS.filter((name) => Object.hasOwn(values, name));
  if (kinds.length === 0) {
    throw new ConfigError(key, 'required', 'an alert rule needs below, above or silent_s', origin);
  }
  if (kinds.length > 1) {
    throw new ConfigError(`${key}.${kinds[1]}`, 'conflict', `a rule has one of below, above, silent_s, not ${
      kinds.join(' and ')}`, origin);
  }
  const rule = { name: values.name, ...DEFAULTS, ...values };
  if (kinds[0] === 'silent_s') {
    const refused = THRESHOLD_ONLY.find((name) => Object.hasOwn(values, name));
    if (refused) {
      throw new ConfigError(`${key}.${refused}`, 'conflict', `a silence rule (silent_s) has no ${refused}`, origin);
    }
    return rule;
  }
  if (!rule.metric) {
    throw new ConfigError(`${key}.metric`, 'required', `a rule with ${kinds[0]} needs the metric it compares`, origin);
  }
  if (!isMetricKey(rule.metric)) {
    throw new ConfigError(`${key}.metric`, 'syntax', `${quote(rule.metric)} is not a metric name `
      + '([a-z][a-z0-9_]{0,15}, not t)', origin);
  }
  const threshold = rule[kinds[0]];
  rule.clear_at ??= threshold;
  if (kinds[0] === 'below' ? rule.clear_at < threshold : rule.clear_at > threshold) {
    const side = kinds[0] === 'below' ? 'at or above below' : 'at or below above';
    throw new ConfigError(`${key}.clear_at`, 'range', `must be ${side} (${quote(threshold)}), not ${
      quote(rule.clear_at)}`, origin);
  }
  return rule;
}
