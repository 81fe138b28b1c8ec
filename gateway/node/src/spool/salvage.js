// A damaged spool (gateway/contract/spool.md, "A damaged spool"): how it is found, and the rows still readable in it.
//
// SQLite keeps no spare copy of a page, and better-sqlite3 does not build SQLite's recovery extension, so the rows are
// read through SQL: each table in rowid order, and where a statement fails on a damaged page the reader seeks past
// it (the smallest rowid a seek reaches without an error) and goes on. What lies on the damaged pages is lost; every
// row read is checked against the spool's schema before it is kept. Rowids are read as BigInts: a damaged cell can
// hold any 64-bit rowid.

import { copyFileSync, existsSync, openSync, rmSync, statSync, writeSync, closeSync } from 'node:fs';

import Database from 'better-sqlite3';

import { VALIDATORS } from './salvaged-rows.js';

const CHECK_ROWS = 20; // problems PRAGMA quick_check lists at most: the first ones say enough
const MAX_ROWID = (1n << 63n) - 1n;
// Page sizes tried when the header is garbage: SQLite's default (what a spool has) first.
const PAGE_SIZES = [4096, 1024, 2048, 8192, 16384, 32768, 65536];

// The tables and columns taken over; text columns as bytes (a damaged cell may not be UTF-8) and the storage class
// of each cell (a damaged cell can hold another type than its column's).
const TABLES = {
  frames: 'id, CAST(source AS BLOB), ts_ms, received_ms, CAST(metrics AS BLOB), vals, '
    + 'typeof(source) || typeof(metrics) || typeof(vals)',
  receipt_stamps: 'CAST(source AS BLOB), last_ts_ms, typeof(source)',
  source_seqs: 'CAST(source AS BLOB), seq, ts_ms, typeof(source)',
  source_counters: 'CAST(source AS BLOB), counter, typeof(source)',
};
// Format 6 added each frame row's checksum; a row of an older file has none (null: kept unchecked).
const FRAMES_WITH_CRC = 'id, CAST(source AS BLOB), ts_ms, received_ms, CAST(metrics AS BLOB), vals, crc, '
  + 'typeof(source) || typeof(metrics) || typeof(vals)';
// Format 5 added the key a counter was accepted under (spool.sql); a format 4 row has none, as its upgrade gives.
const COUNTERS_WITH_KEY = 'CAST(source AS BLOB), counter, CAST(key_fingerprint AS BLOB), '
  + 'typeof(source) || typeof(key_fingerprint)';

/** Whether an error of SQLite says the file is damaged (SQLITE_CORRUPT…, SQLITE_NOTADB), not busy or full. */
export function isDamage(error) {
  const code = typeof error?.code === 'string' ? error.code : '';
  return code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB';
}

/** A connection that changes nothing in the file (its WAL is read, not checkpointed). */
function readOnly(path) {
  return new Database(path, { readonly: true, fileMustExist: true });
}

/** After a read-only connection closed: SQLite made the -wal and -shm files for it when there were none, and they
 * are removed again (an empty WAL), since a WAL file left behind tells the next start that the last run crashed.
 * before: [had -wal, had -shm] from beforeReading. */
function tidy(path, [hadWal, hadShm]) {
  if (!hadWal && existsSync(`${path}-wal`) && statSync(`${path}-wal`).size === 0) {
    rmSync(`${path}-wal`, { force: true });
    if (!hadShm) rmSync(`${path}-shm`, { force: true });
  }
}

const beforeReading = (path) => [existsSync(`${path}-wal`), existsSync(`${path}-shm`)];

/** use(db) on a read-only connection, closed after (and the -wal, -shm it made removed: tidy). */
export function readingOnly(path, use) {
  let db;
  const before = beforeReading(path);
  try {
    db = readOnly(path);
    return use(db);
  } finally {
    db?.close();
    tidy(path, before);
  }
}

/** The spool file's integrity by SQLite's quick check, read-only: {ok, detail}. A missing file is ok; so is one
 * that could not be checked for another reason than damage (detail: "not checked: …"). */
export function check(path) {
  if (!existsSync(path)) return { ok: true, detail: 'ok' };
  try {
    const found = readingOnly(path, (db) => db.pragma(`quick_check(${CHECK_ROWS})`, { simple: false }))
      .map((row) => row.quick_check);
    if (found.length === 1 && found[0] === 'ok') return { ok: true, detail: 'ok' };
    return { ok: false, detail: found.map((finding) => finding.split(/\s+/).join(' ')).join('; ') };
  } catch (error) {
    return failedRead(error);
  }
}

/** An error of a read-only read as check reports it: damage, or "not checked: …" (busy, no room for the WAL index,
 * no permission: the open that follows reports those, not as damage). */
export function failedRead(error) {
  if (!(error instanceof Database.SqliteError)) throw error;
  if (isDamage(error)) return { ok: false, detail: error.message };
  return { ok: true, detail: `not checked: ${error.message}` };
}

/** Every row of the spool's tables that can still be read, checked; read-only. {tables: {name: {rows, invalid,
 * skippedRanges, skippedIds (-1: the end is unknown)}}, unreadable: why nothing could be read, or ''}. A file whose
 * header is garbage (SQLite cannot read its schema) is read again from a copy with a new header. */
export function salvage(path) {
  const found = salvageFile(path);
  if (!found.unreadable) return found;
  const copy = `${path}.salvage`;
  try {
    for (const pageSize of PAGE_SIZES) {
      if (!withNewHeader(path, copy, pageSize)) continue;
      const again = salvageFile(copy);
      if (!again.unreadable && again.tables.frames) return again;
    }
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${copy}${suffix}`, { force: true });
  }
  return found;
}

/** A database header (SQLite's file format, "The Database Header") for `pages` pages of pageSize, in WAL mode,
 * UTF-8, no free list: what any spool's header holds, less the counters SQLite only compares. */
export function header(pageSize, pages) {
  const bytes = Buffer.alloc(100);
  bytes.write('SQLite format 3\0', 0, 'latin1');
  bytes.writeUInt16BE(pageSize % 65536, 16);
  bytes.set([2, 2, 0, 64, 32, 32], 18);
  const words = [[24, 1], [28, pages], [40, 1], [44, 4], [56, 1], [92, 1], [96, 3040001]];
  for (const [offset, value] of words) bytes.writeUInt32BE(value, offset);
  return bytes;
}

function withNewHeader(path, copy, pageSize) {
  const { size } = statSync(path);
  if (size < pageSize) return false;
  try {
    copyFileSync(path, copy);
    if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copy}-wal`);
    const fd = openSync(copy, 'r+');
    try {
      writeSync(fd, header(pageSize, Math.floor(size / pageSize)), 0, 100, 0);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (typeof error?.code !== 'string' || !error.code.startsWith('E')) throw error;
    return false; // no room for the copy: what it would have read stays unread
  }
  return true;
}

function salvageFile(path) {
  let db;
  const before = beforeReading(path);
  try {
    db = readOnly(path);
    // Lets SQLite read a file shorter than its header says (a truncated file) instead of refusing it.
    db.pragma('writable_schema = ON');
    const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all());
    const sequence = tables.has('sqlite_sequence') ? lastFrameId(db) : null;
    const columns = { ...TABLES };
    if (tables.has('frames') && db.pragma('table_info(frames)').some((column) => column.name === 'crc')) {
      columns.frames = FRAMES_WITH_CRC;
    }
    if (tables.has('source_counters')
      && db.pragma('table_info(source_counters)').some((column) => column.name === 'key_fingerprint')) {
      columns.source_counters = COUNTERS_WITH_KEY;
    }
    const result = {};
    for (const table of Object.keys(TABLES)) {
      if (tables.has(table)) result[table] = readTable(db, table, columns[table], table === 'frames' ? sequence : null);
    }
    return { tables: result, unreadable: '' };
  } catch (error) {
    if (!(error instanceof Database.SqliteError)) throw error;
    return { tables: {}, unreadable: error.message };
  } finally {
    db?.close();
    tidy(path, before);
  }
}

/** The highest frame id ever given (AUTOINCREMENT's record), if readable: bounds the ids lost at the end. */
function lastFrameId(db) {
  try {
    const seq = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'frames'").pluck().safeIntegers().get();
    return typeof seq === 'bigint' ? seq : null;
  } catch (error) {
    if (!isDamage(error)) throw error;
    return null;
  }
}

function readTable(db, table, columns, lastId) {
  const valid = VALIDATORS[table];
  const stream = db.prepare(`SELECT rowid, ${columns} FROM ${table} WHERE rowid >= ? ORDER BY rowid`).raw()
    .safeIntegers();
  const single = db.prepare(`SELECT rowid, ${columns} FROM ${table} WHERE rowid >= ? ORDER BY rowid LIMIT 1`).raw()
    .safeIntegers();
  const rows = [];
  let invalid = 0;
  let skippedRanges = 0;
  let skipped = 0n;
  let nextId = 1n; // the next rowid to read; every table's rowids start at 1
  const keep = (row) => {
    nextId = row[0] + 1n;
    const checked = valid(row.slice(1));
    if (checked) rows.push(checked);
    else invalid += 1;
  };
  const result = () => ({ rows, invalid, skippedRanges, skippedIds: Number(skipped) });
  while (nextId <= MAX_ROWID) {
    try {
      for (const row of stream.iterate(nextId)) keep(row);
      break;
    } catch (error) {
      if (!isDamage(error)) throw error;
    }
    // A statement may step ahead of the row it returns: the row at nextId may still be readable on its own.
    const row = seek(single, nextId);
    if (row === null) break;
    if (row !== false) {
      keep(row);
      continue;
    }
    const resume = nextReadable(db, table, nextId);
    skippedRanges += 1;
    if (resume === null) { // nothing readable after the damage: the end of the table is lost
      skipped = lastId === null ? -1n : skipped + (lastId >= nextId ? lastId - nextId + 1n : 0n);
      break;
    }
    skipped += resume - nextId;
    nextId = resume;
  }
  return result();
}

/** The first row at or above rowid (statement: … WHERE rowid >= ? … LIMIT 1); null at the end; false when the seek
 * fails on damage. */
function seek(statement, rowid) {
  try {
    return statement.get(rowid) ?? null;
  } catch (error) {
    if (!isDamage(error)) throw error;
    return false;
  }
}

/** The first rowid above failed (whose seek failed) that a seek reaches without an error, or null. Seeks into a
 * damaged page fail, seeks beyond it work: probe in growing steps, then narrow down to the first seek that works. */
function nextReadable(db, table, failed) {
  const find = db.prepare(`SELECT rowid FROM ${table} WHERE rowid >= ? ORDER BY rowid LIMIT 1`).pluck()
    .safeIntegers();
  let bad = failed;
  let step = 1n;
  let probe;
  let found;
  for (;;) {
    probe = failed + step < MAX_ROWID ? failed + step : MAX_ROWID;
    found = seek(find, probe);
    if (found !== false) break;
    bad = probe;
    if (probe === MAX_ROWID) return null;
    step *= 2n;
  }
  let good = probe;
  while (good - bad > 1n) { // bad: a seek failed; good: it worked
    const middle = (bad + good) / 2n;
    const result = seek(find, middle);
    if (result === false) bad = middle;
    else [good, found] = [middle, result];
  }
  return found;
}
