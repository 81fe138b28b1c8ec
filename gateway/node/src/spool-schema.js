// The spool's schema and format version, as the gateway contract writes them (gateway/contract/spool.sql):
// every gateway creates its spool from that one file, read at run time.
//
// better-sqlite3's exec() runs a whole script, statement by statement in order, inside whatever transaction is
// open (Python's executescript would commit first, which is why spool_schema.py splits the script itself). The
// format version is what SQLite makes of the script's PRAGMA user_version, run once on a database in memory.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';

export const SPOOL_SQL_PATH = fileURLToPath(new URL('../contract/spool.sql', import.meta.url));

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
