// What `check` reads of a spool file (gateway/contract/process.md, "check"), read-only: SQLite's quick check, the
// file's format as a start judges it, and every frame row checked as a send read checks it (spool.md, "Row
// checksums"). Nothing in the file changes.

import { crcMatches } from './row-check.js';
import { check, failedRead, readingOnly } from './salvage.js';
import { FORMAT_VERSION, tableColumns } from './schema.js';
import { upgradeSteps } from './upgrade-plan.js';

const BATCH = 4096; // frame rows per read: a large spool is checked without holding it in memory
// The columns as the send read takes them (store.js): vals as hex, a Buffer from a string costing less than a blob's.
const FRAME_ROWS = 'SELECT id, source, ts_ms, received_ms, metrics, hex(vals), crc FROM frames WHERE id > ? '
  + 'ORDER BY id LIMIT ?';

/**
 * The spool file at path (which exists), read-only: {integrity: the quick check's {ok, detail}, or the damage (or
 * other error) the reads below met; version: the file's user_version (0 when not read); newer: a format newer than
 * FORMAT_VERSION, refused by a start, its rows not read; frames: frame rows in the file; failing: of them, rows
 * failing their checksum}.
 */
export function audit(path) {
  const integrity = check(path);
  const found = { integrity, version: 0, newer: false, frames: 0, failing: 0 };
  if (!integrity.ok || integrity.detail !== 'ok') return found;
  try {
    return readingOnly(path, (db) => {
      const version = db.pragma('user_version', { simple: true });
      const columns = tableColumns(db);
      if (upgradeSteps(version, columns, FORMAT_VERSION) === null) return { ...found, version, newer: true };
      return { ...found, version, ...frameRows(db, columns.get('frames')) };
    });
  } catch (error) {
    return { ...found, integrity: failedRead(error) };
  }
}

/** {frames, failing}; a file older than format 6 has no checksums: its rows only counted. */
function frameRows(db, columns) {
  if (columns === undefined) return { frames: 0, failing: 0 };
  if (!columns.includes('crc')) return { frames: db.prepare('SELECT count(*) FROM frames').pluck().get(), failing: 0 };
  const read = db.prepare(FRAME_ROWS).raw();
  let frames = 0;
  let failing = 0;
  for (let rows = read.all(0, BATCH); rows.length > 0; rows = read.all(rows.at(-1)[0], BATCH)) {
    frames += rows.length;
    for (const [, source, tsMs, receivedMs, metrics, hex, crc] of rows) {
      if (!crcMatches(crc, source, tsMs, receivedMs, metrics, Buffer.from(hex, 'hex'))) failing += 1;
    }
  }
  return { frames, failing };
}
