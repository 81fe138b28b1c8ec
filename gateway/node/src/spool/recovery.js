// Opening a damaged spool (gateway/contract/spool.md, "A damaged spool"): the rows still readable go into a new spool
// file, the damaged one is moved aside with a time stamp, and the gateway goes on with the new one.
//
// The order keeps a crash in the middle harmless: the new file is built and closed under a name of its own first, the
// damaged file (with its WAL) moved aside next, and the new one renamed into place last; a crash before the last
// rename leaves the damaged file at the spool's path (the next start does it again) or, after the damaged file was
// moved, none: then the next start renames the new one into place.

import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

import Database from 'better-sqlite3';

import { check, salvage } from './salvage.js';
import { SCHEMA_SQL } from './schema.js';

const INSERT_ROWS = 128; // frames per INSERT statement (768 variables)
// The per-source tables taken over, by the columns read (salvage.js); named, so that a later format's added column
// keeps its default.
const SMALL_TABLES = {
  receipt_stamps: ['source', 'last_ts_ms'],
  source_seqs: ['source', 'seq', 'ts_ms'],
  source_counters: ['source', 'counter', 'key_fingerprint'],
};
const NONE = { rows: [], invalid: 0, skippedRanges: 0, skippedIds: -1 };

/** <path>.damaged-<UTC time stamp>, e.g. spool.db.damaged-20261127T203000Z. */
export function asidePath(path, nowMs) {
  const stamp = new Date(nowMs).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return join(dirname(path), `${basename(path)}.damaged-${stamp}`);
}

/** null for a sound (or missing) spool file; else the damaged file is replaced by a new spool holding what could be
 * read from it, and what happened is returned: {aside, detail, frames, framesInvalid, framesSkippedIds (-1:
 * unknown), stamps, seqs, counters, countersComplete}. damage: SQLite's error when opening found it (no check then). */
export function recoverIfDamaged(path, { nowMs = Date.now(), damage = null } = {}) {
  const building = `${path}.recovering`;
  if (!existsSync(path) && existsSync(building)) { // the last start stopped between its renames: the new one is whole
    renameSync(building, path);
    syncFolder(dirname(path));
  }
  const integrity = damage === null ? check(path) : { ok: false, detail: damage };
  if (integrity.ok) return null;
  const found = salvage(path);
  remove(building);
  build(building, found);
  const aside = asidePath(path, nowMs);
  // The WAL keeps its name's tie to the file, so the copy aside reads whole.
  for (const suffix of ['', '-wal', '-shm']) {
    if (existsSync(`${path}${suffix}`)) renameSync(`${path}${suffix}`, `${aside}${suffix}`);
  }
  renameSync(building, path);
  syncFolder(dirname(path));
  const frames = found.tables.frames ?? NONE;
  const counters = found.tables.source_counters;
  const count = (table) => found.tables[table]?.rows.length ?? 0;
  return {
    aside,
    detail: integrity.detail.slice(0, 300),
    frames: frames.rows.length,
    framesInvalid: frames.invalid,
    framesSkippedIds: found.unreadable ? -1 : frames.skippedIds,
    stamps: count('receipt_stamps'),
    seqs: count('source_seqs'),
    counters: count('source_counters'),
    countersComplete: counters !== undefined && counters.invalid === 0 && counters.skippedRanges === 0,
  };
}

/** A new spool at path with the rows found, in one transaction, synced; closed (its WAL folded in). */
function build(path, found) {
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('BEGIN IMMEDIATE');
    db.exec(SCHEMA_SQL);
    // New ids in the order read: a damaged rowid may repeat another one; the frame's meaning has no id.
    const frames = (found.tables.frames ?? NONE).rows;
    for (let start = 0; start < frames.length; start += INSERT_ROWS) {
      const chunk = frames.slice(start, start + INSERT_ROWS);
      db.prepare(`INSERT INTO frames (source, ts_ms, received_ms, metrics, vals, crc) VALUES ${
        chunk.map(() => '(?, ?, ?, ?, ?, ?)').join(',')}`).run(chunk.flatMap((row) => row.slice(1)));
    }
    for (const [table, columns] of Object.entries(SMALL_TABLES)) {
      const insert = db.prepare(`INSERT OR REPLACE INTO ${table} (${columns.join(', ')}) VALUES (${
        columns.map(() => '?').join(', ')})`);
      for (const row of found.tables[table]?.rows ?? []) insert.run(row);
    }
    db.exec('COMMIT');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch (error) {
    db.close();
    remove(path);
    throw error;
  }
  db.close();
}

function remove(path) {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
}

/** The renames survive a power cut once the folder is synced. */
function syncFolder(folder) {
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
