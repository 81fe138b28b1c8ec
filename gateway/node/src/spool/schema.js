// The spool's schema and format version, as the gateway contract writes them (gateway/contract/spool.sql), and
// opening a spool file by gateway/contract/spool.md, "Creating and opening": every gateway creates its spool from
// that one file, read at run time, and upgrades an older one.
//
// better-sqlite3's exec() runs a whole script, statement by statement in order, inside whatever transaction is
// open. The format version is what SQLite makes of the script's PRAGMA user_version, run once on a database in
// memory.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';

import { contractNumber } from '../contract-constants.js';
import { packValues } from '../reading-values.js';
import { upgradeSteps } from './upgrade-plan.js';

const SPOOL_SQL_PATH = fileURLToPath(new URL('../../contract/spool.sql', import.meta.url));

/** The script's PRAGMA user_version, or the error SQLite gives for it (an unfinished statement among them). */
export function formatVersion(script) {
  const db = new Database(':memory:');
  try {
    db.exec(script);
    return db.pragma('user_version', { simple: true });
  } finally {
    db.close();
  }
}

/** gateway/contract/spool.sql: its statements create the tables (if not there) and set the format version. */
export const SCHEMA_SQL = readFileSync(SPOOL_SQL_PATH, 'utf8');
/** PRAGMA user_version of a spool in this format; 1 (or 0) stored the values as JSON text. */
export const FORMAT_VERSION = formatVersion(SCHEMA_SQL);

export const BUSY_TIMEOUT_MS = contractNumber('spool_busy_timeout_ms');
// What the WAL file is cut back to when it restarts.
export const WAL_KEEP_BYTES = contractNumber('spool_journal_size_limit_bytes');

/** A connection to the spool at path with the pragmas of spool.md (WAL; synchronous: "NORMAL" or "FULL"). A file
 * of a newer format is refused (SpoolFormatError) before anything is written to it. */
export function connect(path, synchronous) {
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    steps(db, path);
    // Nothing here writes to a spool that is already set up, so it opens on a full disk.
    if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous}`);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('wal_autocheckpoint = 0'); // the spool's checkpoint() does it, off the commit path
    // A WAL is reused, not shrunk, after a checkpoint: without a limit it keeps its largest size on the disk.
    db.pragma(`journal_size_limit = ${WAL_KEEP_BYTES}`);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** The spool file was written by a newer gateway: refuse it rather than misread it. */
export class SpoolFormatError extends Error {
  constructor(message) {
    super(message);
    this.name = 'SpoolFormatError';
  }
}

/** Makes the spool at db (the writer connection; path: for the error) a spool of this format by upgrade-plan.js:
 * refuses a newer one (connect() did, before switching it to WAL), runs the steps
 * due and spool.sql's user_version in one transaction, so a crash leaves the old format whole. Writes nothing to a
 * spool already in this format, so it opens on a full disk. */
export function openFormat(db, path) {
  if (steps(db, path).length === 0) return;
  db.exec('BEGIN IMMEDIATE');
  try {
    for (const step of steps(db, path)) STEPS[step](db); // again, under the write lock
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK'); // SQLite may have rolled it back itself (a full disk)
    throw error;
  }
}

/** Each table of the file (SQLite's own left out) → its column names, in order. */
export function tableColumns(db) {
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .pluck().all();
  return new Map(names.map((name) => [name, db.pragma(`table_info("${name}")`).map((column) => column.name)]));
}

/** The upgrade steps due, or throws SpoolFormatError for a newer format. */
function steps(db, path) {
  const version = db.pragma('user_version', { simple: true });
  const due = upgradeSteps(version, tableColumns(db), FORMAT_VERSION);
  if (due === null) {
    throw new SpoolFormatError(`${path} is spool format ${version}; this gateway reads up to `
      + `${FORMAT_VERSION}: upgrade the gateway or move the file away`);
  }
  return due;
}

/** Format 1 held the values as JSON text, [["temp_in",21.5],["light",3]]: each row copied with the same id, its
 * pairs encoded, and no checksum (NULL: unchecked), as every row written before checksums. */
function copyFormat1Rows(db) {
  const old = db.prepare('SELECT id, source, ts_ms, received_ms, vals FROM frames_format1').all();
  const insert = db.prepare('INSERT INTO frames (id, source, ts_ms, received_ms, metrics, vals) '
    + 'VALUES (?, ?, ?, ?, ?, ?)');
  for (const row of old) {
    const { metrics, vals } = packValues(JSON.parse(row.vals).map(([name, value]) => [name, Number(value)]));
    insert.run(row.id, row.source, row.ts_ms, row.received_ms, metrics, vals);
  }
  db.exec('DROP TABLE frames_format1');
}

/** Format 4 → 5 (spool.md, "Upgrading"): counters bound to their keys. The rows kept get '', bound to the key the
 * gateway next starts with. */
const ADD_KEY_FINGERPRINT = "ALTER TABLE source_counters ADD COLUMN key_fingerprint TEXT NOT NULL DEFAULT ''";
/** Format 5 → 6: a checksum per frame row. The rows kept get NULL, sent unchecked (a checksum made now would
 * vouch for bytes that may already be damaged). */
const ADD_CRC = 'ALTER TABLE frames ADD COLUMN crc INTEGER';

/** upgrade-plan.js's steps, each run inside openFormat's transaction (tests may replace one: a step that fails). */
export const STEPS = {
  frames_format1_aside: (db) => db.exec('ALTER TABLE frames RENAME TO frames_format1'),
  add_key_fingerprint: (db) => db.exec(ADD_KEY_FINGERPRINT),
  add_crc: (db) => db.exec(ADD_CRC),
  schema: (db) => db.exec(SCHEMA_SQL), // every statement IF NOT EXISTS: tables, format version
  format1_rows_copied: copyFormat1Rows,
};
