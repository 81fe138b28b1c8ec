// The config keys as the contract declares them (gateway/contract/config.schema.json, read from the contract
// beside this package): every section and key with its type, default, rules and environment variable. The config
// loader and the port entries take everything per key from here.

import { readFileSync } from 'node:fs';

export const SCHEMA = Object.freeze(
  JSON.parse(readFileSync(new URL('../contract/config.schema.json', import.meta.url), 'utf8')));

/** section -> key -> declaration (type, default, min/above/max, choices, not_empty, items_not_empty, pattern,
 * form, env, secret, unit, meaning), in the schema's order. */
export const SECTIONS = Object.freeze(Object.fromEntries(
  Object.entries(SCHEMA.sections).map(([name, section]) => [name, section.keys])));
export const PORT_TABLE = SCHEMA.port_table;
export const ALERT_TABLE = SCHEMA.alert_table; // the keys of an [[alerts]] table
export const CREDENTIALS = SCHEMA.credentials;
