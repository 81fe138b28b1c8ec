// telemetry-gateway-node counters list | reset --source SOURCE (gateway/contract/process.md, signing.md
// "Re-keying a node whose reservation was erased"): the spool's signed-frame counters, and forgetting one that
// belongs to a key the node no longer has. A reset under an unchanged key would make every payload recorded under
// it acceptable again, so it is refused: the cure is a new key.
//
// The decisions are pure (keyState, resetVerdict); the shell opens the spool without creating or upgrading it, and
// resets only while no other connection has it open (a running gateway).

import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';

import Database from 'better-sqlite3';

import { isSourceName } from './protocol.js';
import { keyFingerprint } from './signing.js';
import { BUSY_TIMEOUT_MS, FORMAT_VERSION } from './spool/schema.js';

const STATES = Object.freeze({
  current: 'the key the keys file holds for it',
  other: 'another key: starts afresh at the next start',
  unbound: 'no fingerprint (written before them): bound to the key the next start has',
  none: 'the source has no key now',
});

/** current, other, unbound or none (STATES). keys: Map source → key. */
export function keyState(source, fingerprint, keys) {
  const key = keys.get(source);
  if (key === undefined) return 'none';
  if (!fingerprint) return 'unbound';
  return fingerprint === keyFingerprint(key) ? 'current' : 'other';
}

/** Whether the row may go, and the line that says so: [allowed, line]. */
export function resetVerdict(source, counter, state) {
  if (state === 'other' || state === 'none') {
    return [true, `counters: ${source}'s counter ${counter} (${STATES[state]}) removed: its next signed frame `
      + 'starts it afresh'];
  }
  return [false, `counters: ${source}'s counter ${counter} belongs to the key the keys file holds for it`
    + `${state === 'unbound' ? ' (or may: written before fingerprints)' : ''}: a reset would accept again every `
    + 'payload recorded under that key. Re-key the node (a new key in the keys file and the board, signing.md), '
    + `or flash it with a counter floor above ${counter}`];
}

/** The command cannot do what was asked: its message on stderr, exit status 1. */
class Refused extends Error {}

function open(path, timeout) {
  if (!existsSync(path)) {
    throw new Refused(`counters: no spool at ${path} (the config's [spool] path): no counter is stored there`);
  }
  const db = new Database(path, { fileMustExist: true, timeout });
  const version = db.pragma('user_version', { simple: true });
  if (version > FORMAT_VERSION) {
    db.close();
    throw new Refused(`counters: ${path} is spool format ${version}; this gateway reads up to ${FORMAT_VERSION}`);
  }
  return db;
}

function rows(db) {
  const columns = new Set(db.prepare('PRAGMA table_info(source_counters)').all().map((column) => column.name));
  if (columns.size === 0) return [];
  const fingerprint = columns.has('key_fingerprint') ? 'key_fingerprint' : "''"; // format 4: not upgraded here
  return db.prepare(`SELECT source, counter, ${fingerprint} FROM source_counters ORDER BY source`).raw().all();
}

function listCounters(path, keys, stdout) {
  const db = open(path, BUSY_TIMEOUT_MS);
  try {
    for (const [source, counter, fingerprint] of rows(db)) {
      stdout.write(`source=${source} counter=${counter} key=${keyState(source, fingerprint, keys)}\n`);
    }
  } finally {
    db.close();
  }
  return 0;
}

function resetCounter(path, keys, source, stdout) {
  const db = open(path, 0);
  try {
    // A running gateway keeps the spool open: taking the file for this connection alone fails at once then.
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('synchronous = FULL');
    try {
      db.exec('BEGIN EXCLUSIVE');
    } catch {
      throw new Refused(`counters: the spool ${path} is in use (a gateway is running?): stop the gateway first, `
        + 'then reset');
    }
    const row = rows(db).find(([name]) => name === source);
    if (row === undefined) {
      db.exec('ROLLBACK');
      stdout.write(`counters: no counter stored for ${source}: nothing to reset\n`);
      return 0;
    }
    const [, counter, fingerprint] = row;
    const [allowed, line] = resetVerdict(source, counter, keyState(source, fingerprint, keys));
    if (!allowed) {
      db.exec('ROLLBACK');
      throw new Refused(line);
    }
    db.prepare('DELETE FROM source_counters WHERE source = ?').run(source);
    db.exec('COMMIT');
    stdout.write(`${line}\n`);
    return 0;
  } finally {
    db.close();
  }
}

const OPTIONS = {
  list: { help: { type: 'boolean', short: 'h' }, config: { type: 'string' }, spool: { type: 'string' } },
  reset: { help: { type: 'boolean', short: 'h' }, config: { type: 'string' }, spool: { type: 'string' },
    source: { type: 'string' } },
};

const COUNTERS_HELP = (prog) => `Usage: ${prog} counters list [--config FILE] [--spool PATH]
       ${prog} counters reset --source SOURCE [--config FILE] [--spool PATH]

The spool's signed-frame counters (signing.md).
  list    every stored counter and whose key it is: current, other (starts afresh at the next start), unbound
          (written before fingerprints: bound to the key the next start has), none (the source has no key now)
  reset   forget a node's counter once its key changed; refused (exit 1) under an unchanged key, and while a
          gateway has the spool open

Options:
  -h, --help        this help
  --source SOURCE   reset: the node's source id
  --config FILE     TOML file (env TELEMETRY_CONFIG; default /etc/telemetry-gateway/config.toml if it exists)
  --spool PATH      spool file ([spool] path)
`;

/**
 * `counters ...`: resolves to the exit status. configFrom/loadSigningPolicy come from the caller (cli.js), whose
 * ConfigError handling (exit 2) applies.
 */
export async function countersCommand(args, { prog, stdout, stderr, env, configFrom, loadSigningPolicy }) {
  const [action, ...rest] = args;
  if (action === '-h' || action === '--help') {
    stdout.write(COUNTERS_HELP(prog));
    return 0;
  }
  if (!Object.hasOwn(OPTIONS, action ?? '')) {
    stderr.write(`${prog}: counters: ${action === undefined ? 'list or reset is required'
      : `unknown action ${JSON.stringify(action)}: list or reset`} (${prog} counters --help)\n`);
    return 2;
  }
  let values;
  try {
    ({ values } = parseArgs({ args: rest, options: OPTIONS[action], strict: true, allowPositionals: false }));
  } catch (error) {
    stderr.write(`${prog}: counters ${action}: ${error.message} (${prog} counters --help)\n`);
    return 2;
  }
  if (values.help) {
    stdout.write(COUNTERS_HELP(prog));
    return 0;
  }
  if (action === 'reset' && !isSourceName(values.source ?? '')) {
    stderr.write(`${prog}: counters reset: --source: ${values.source === undefined ? 'required'
      : `${JSON.stringify(values.source)} is not a source name ([A-Za-z0-9_-]{1,32})`}\n`);
    return 2;
  }
  const config = configFrom({ config: values.config, spool: values.spool }, env);
  const { keys } = loadSigningPolicy(config, env);
  const path = config.spool.path;
  try {
    return action === 'list' ? listCounters(path, keys, stdout) : resetCounter(path, keys, values.source, stdout);
  } catch (error) {
    if (error instanceof Refused) {
      stderr.write(`${error.message}\n`);
      return 1;
    }
    if (error?.code?.startsWith?.('SQLITE_')) { // a damaged file: the next start recovers it (spool.md)
      stderr.write(`counters: ${path}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
