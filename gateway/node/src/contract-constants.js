// The contract's numbers and CQL statements, read once at load time from the files that declare them
// (gateway/contract/constants.json and statements.cql, beside this package): no module of the gateway types a
// contract number or statement itself (tests/test_contract_constants.py holds that).

import { readFileSync } from 'node:fs';

const read = (file) => readFileSync(new URL(`../contract/${file}`, import.meta.url), 'utf8');
const DECLARED = JSON.parse(read('constants.json'));

/** Reject reasons by where they arise: decode (PROTOCOL.md section 4), input, csv (section 7), signing. */
export const REJECT_REASONS = Object.freeze(Object.fromEntries(
  Object.entries(DECLARED.reject_reasons).map(([group, reasons]) => [group, Object.freeze([...reasons])]),
));

/** A constant of constants.json, in its unit (the name says it: *_ms, *_bytes; else a count). */
export function contractNumber(name) {
  const constant = DECLARED.constants[name];
  if (constant === undefined) throw new Error(`constants.json has no ${name}`);
  return constant.value;
}

/**
 * statements.cql's format (its header): `-- name: <name>` before each statement, which runs to its `;`; other
 * `--` lines and empty lines are comments.
 */
function parseStatements(text) {
  const found = {};
  let name = null;
  let lines = [];
  for (const line of text.split('\n').map((raw) => raw.trim())) {
    if (line.startsWith('-- name:')) {
      name = line.slice('-- name:'.length).trim();
      lines = [];
    } else if (line !== '' && !line.startsWith('--')) {
      if (name === null) throw new Error(`statements.cql: a statement without a name: ${line}`);
      lines.push(line);
      if (line.endsWith(';')) {
        found[name] = lines.join(' ').slice(0, -1);
        name = null;
      }
    }
  }
  return found;
}

/** statements.cql's statements by name: reading, source_day, latest, day_change. */
export const STATEMENTS = Object.freeze(parseStatements(read('statements.cql')));
