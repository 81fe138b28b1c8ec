// The spool file's rows (gateway/contract/spool.md, "Rows" and "Writing"): the connections, the group commit of new
// frames, acknowledgements, receipt stamps and seqs in one transaction, and the frames read back for the sender.
//
// SQLite in WAL mode, through better-sqlite3, whose calls are synchronous: the spool lives on the event loop's one
// thread, so nothing runs beside a commit and no locks are needed. Two connections, as spool.md has them: the
// writer (group commits, deletes, the truncating checkpoints of a low disk) and a reader for take() and the passive
// checkpoint. Frame ids come from AUTOINCREMENT (or from the deferred policy, above every id given) so they only
// grow: a reader's cursor never skips a frame, even after the file was emptied. Frames go in by multi-row INSERTs
// of a few fixed sizes (FrameInserts, below).

import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';

import Database from 'better-sqlite3';

import { contractNumber } from '../contract-constants.js';
import { packValues } from '../reading-values.js';
import { crcMatches, frameCrc } from './row-check.js';
import { connect, openFormat } from './schema.js';

// A refused commit with less than this free was refused by the disk.
export const DISK_FULL_BYTES = contractNumber('disk_full_free_bytes');

/** No room: the spool's cap (SQLite max_page_count) or the disk itself. Nothing of the commit was written. */
export class SpoolFull extends Error {
  constructor(message, capReached, options) {
    super(message, options);
    this.name = 'SpoolFull';
    this.capReached = capReached;
  }
}

// Multi-row INSERTs of a few fixed sizes, one statement step per 128 frames. Frames with an id (held ones, under
// fsync = deferred) keep it; new ones get theirs from AUTOINCREMENT.

// Rows per INSERT statement, largest first. 128 rows are 768 variables (896 with the id), within any SQLite's limit.
const INSERT_SIZES = [128, 32, 8, 1];
const insertSql = (size, withId) => `INSERT INTO frames (${withId ? 'id, ' : ''}source, ts_ms, received_ms, metrics, `
  + `vals, crc) VALUES ${Array(size).fill(withId ? '(?, ?, ?, ?, ?, ?, ?)' : '(?, ?, ?, ?, ?, ?)').join(',')}`;

function insertParams(frames, start, size, withId) {
  const params = new Array(size * (withId ? 7 : 6));
  let p = 0;
  for (let i = start; i < start + size; i++) {
    const frame = frames[i];
    if (withId) params[p++] = frame.id;
    params[p++] = frame.source;
    params[p++] = frame.ts_ms;
    params[p++] = frame.received_ms;
    params[p++] = frame.metrics;
    params[p++] = frame.vals;
    params[p++] = frameCrc(frame.source, frame.ts_ms, frame.received_ms, frame.metrics, frame.vals); // Row checksums
  }
  return params;
}

class FrameInserts {
  /** db: the spool's writer connection. */
  constructor(db) {
    this.plain = new Map(INSERT_SIZES.map((size) => [size, db.prepare(insertSql(size, false))]));
    this.withId = new Map(INSERT_SIZES.map((size) => [size, db.prepare(insertSql(size, true))]));
  }

  /** Inserts frames (inside the caller's transaction), in their order. */
  run(frames) {
    const withId = frames[0].id !== undefined;
    const inserts = withId ? this.withId : this.plain;
    let start = 0;
    for (const size of INSERT_SIZES) {
      const insert = inserts.get(size);
      for (; frames.length - start >= size; start += size) insert.run(insertParams(frames, start, size, withId));
    }
  }
}

/** A frame to commit: {source, ts_ms, received_ms, metrics, vals, seq}, the columns of its row and its seq (null:
 * none, e.g. legacy JSON or the room board's CSV), which the spool keeps in source_seqs once the frame is safe. */
export function newFrame(source, tsMs, receivedMs, values, seq = null) {
  return { source, ts_ms: tsMs, received_ms: receivedMs, ...packValues(values), seq };
}

/** Receipt stamps as [source, lastTsMs] pairs, from a Map, a plain object, pairs or nothing. */
export function stampEntries(stamps) {
  if (stamps == null) return [];
  if (stamps instanceof Map) return [...stamps];
  return Array.isArray(stamps) ? stamps : Object.entries(stamps);
}

/** SQLite's or the file system's word for a full disk (or a write it could not do). */
export function isDiskError(error) {
  const code = typeof error?.code === 'string' ? error.code : '';
  return code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR') || code === 'ENOSPC';
}

/** Rethrows anything but an error of SQLite: those are the caller's to swallow. */
export function onlySqliteErrors(error) {
  if (!(error instanceof Database.SqliteError)) throw error;
}

/** Bytes free for an unprivileged writer on the disk holding path. */
export function diskFree(path) {
  const stats = statfsSync(dirname(path));
  return stats.bavail * stats.bsize;
}

export class Store {
  /** Opens (or creates) the spool file at path; synchronous: "FULL" or "NORMAL" (the policy's). */
  constructor(path, synchronous) {
    this.path = path;
    this.synchronous = synchronous;
    this.db = connect(path, synchronous);
    try {
      openFormat(this.db, path);
      this.pageSize = this.db.pragma('page_size', { simple: true });
      this.reader = connect(path, synchronous);
      this._prepare();
    } catch (error) {
      this.reader?.close();
      this.db.close();
      throw error;
    }
  }

  _prepare() {
    const db = this.db;
    this._inserts = new FrameInserts(db);
    this._deleteRange = db.prepare('DELETE FROM frames WHERE id BETWEEN ? AND ?');
    // Per-source rows are updated in place (an upsert keeps the rowid): INSERT OR REPLACE deletes and inserts the
    // row, which rewrites the primary key's index page too, a second page in the WAL for every commit.
    this._saveStamp = db.prepare('INSERT INTO receipt_stamps (source, last_ts_ms) VALUES (?, ?) '
      + 'ON CONFLICT (source) DO UPDATE SET last_ts_ms = excluded.last_ts_ms');
    this._saveSeq = db.prepare('INSERT INTO source_seqs (source, seq, ts_ms) VALUES (?, ?, ?) '
      + 'ON CONFLICT (source) DO UPDATE SET seq = excluded.seq, ts_ms = excluded.ts_ms');
    this._saveCounter = db.prepare('INSERT OR REPLACE INTO source_counters (source, counter, key_fingerprint) '
      + 'VALUES (?, ?, ?)');
    // Signed frames' counters (spool.md, "Counters of signed frames"): written by the next commit that succeeds.
    this.countersPending = new Map(); // source → [counter, its key's fingerprint]
    // vals as hex, made into Buffers here: better-sqlite3 gives each blob a Buffer with a backing store of its own
    // (a malloc and the GC's external-memory accounting per frame); a Buffer from a string comes from Node's pool.
    this._take = this.reader.prepare('SELECT id, source, ts_ms, received_ms, metrics, hex(vals) AS vals, crc '
      + 'FROM frames WHERE id > ? ORDER BY id LIMIT ?').raw();
    this._deleteOne = db.prepare('DELETE FROM frames WHERE id = ?');
    // Frame rows a take found failing their checksum, as read, not yet reported; ids of those whose delete failed.
    this.damaged = [];
    this._damagedSeen = new Set();
    this._oldestReceived = this.reader.prepare('SELECT received_ms FROM frames ORDER BY id LIMIT 1').pluck();
    this.changes = 0; // rows changed through the writer: the file changed when this did
    this.depth = db.prepare('SELECT count(*) FROM frames').pluck().get(); // frames in the file
    this.maxId = db.prepare('SELECT coalesce(max(id), 0) FROM frames').pluck().get();
    const sequence = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'frames'").pluck().get();
    this.nextId = Math.max(this.maxId, sequence ?? 0) + 1; // above every id the file has given
  }

  /** One transaction: deletes acknowledged inclusive [first, last] id ranges, appends frames, stores stamps
   * ([source, ms] pairs) and seqs ([source, [seq, ts_ms]] pairs). Throws SpoolFull (nothing written) when the disk
   * or the page limit refused it. */
  commit(frames, acked, stamps, seqs = []) {
    let deleted = 0;
    // Counters are durable in every policy (spool.md, "Counters of signed frames"): fsynced inside the commit, before
    // a reader can take its frames; at NORMAL a power cut could take back a counter whose frame Cassandra has.
    const durable = this.countersPending.size > 0 && this.synchronous !== 'FULL';
    if (durable) this.db.pragma('synchronous = FULL');
    try {
      this.db.exec('BEGIN IMMEDIATE');
      for (const [first, last] of acked) deleted += this._deleteRange.run(first, last).changes;
      if (frames.length > 0) this._inserts.run(frames);
      for (const [source, lastTsMs] of stamps) this._saveStamp.run(source, lastTsMs);
      for (const [source, [seq, tsMs]] of seqs) this._saveSeq.run(source, seq, tsMs);
      for (const [source, [counter, fingerprint]] of this.countersPending) {
        this._saveCounter.run(source, counter, fingerprint);
      }
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      if (isDiskError(error)) {
        throw new SpoolFull(error.message, diskFree(this.path) >= DISK_FULL_BYTES, { cause: error });
      }
      throw error;
    } finally {
      if (durable) this.db.pragma(`synchronous = ${this.synchronous}`);
    }
    this.depth += frames.length - deleted;
    this.changes += deleted + frames.length + stamps.length + seqs.length + this.countersPending.size;
    this.countersPending = new Map();
  }

  /** Deletes one inclusive id range in a transaction of its own. */
  deleteRange(first, last) {
    const deleted = this._deleteRange.run(first, last).changes;
    this.depth -= deleted;
    this.changes += deleted;
  }

  /** Whether deleting these acknowledged inclusive id ranges leaves no frame in the file. */
  emptiedBy(ranges) {
    if (!ranges.length || ranges.reduce((n, [first, last]) => n + last - first + 1, 0) < this.depth) {
      return false; // cheap: the ranges cannot hold every frame (a backlog being drained)
    }
    const merged = []; // a range acknowledged twice must not count its frames twice
    for (const [first, last] of [...ranges].sort((a, b) => a[0] - b[0])) {
      if (merged.length && first <= merged.at(-1)[1] + 1) merged.at(-1)[1] = Math.max(merged.at(-1)[1], last);
      else merged.push([first, last]);
    }
    const count = this.db.prepare('SELECT count(*) FROM frames WHERE id BETWEEN ? AND ?').pluck();
    return merged.reduce((n, [first, last]) => n + count.get(first, last), 0) >= this.depth;
  }

  /** When the oldest frame in the file was read (the status page's age of what is not yet in Cassandra); null
   * when the file has none. */
  oldestReceivedMs() {
    return this._oldestReceived.get() ?? null;
  }

  /** The oldest committed frames with an id above afterId: [{id, source, ts_ms, received_ms, metrics, vals}].
   * A row failing its checksum is left out, kept in this.damaged for the caller to report, and deleted. */
  take(afterId, limit) {
    const rows = this._take.all(afterId, limit);
    const frames = [];
    let damaged = null;
    for (const [id, source, tsMs, receivedMs, metrics, hex, crc] of rows) {
      const frame = { id, source, ts_ms: tsMs, received_ms: receivedMs, metrics, vals: Buffer.from(hex, 'hex') };
      if (crcMatches(crc, source, tsMs, receivedMs, metrics, frame.vals)) frames.push(frame);
      else (damaged ??= []).push(frame);
    }
    if (damaged) this._dropDamaged(damaged);
    return frames;
  }

  /** Rows failing their checksum (spool.md, "Row checksums"): reported once, deleted so the file can be emptied. */
  _dropDamaged(rows) {
    for (const row of rows) {
      if (this._damagedSeen.has(row.id)) continue;
      this._damagedSeen.add(row.id);
      this.damaged.push(row);
    }
    try {
      for (const row of rows) {
        const deleted = this._deleteOne.run(row.id).changes;
        this.depth -= deleted;
        this.changes += deleted;
        this._damagedSeen.delete(row.id);
      }
    } catch (error) {
      onlySqliteErrors(error); // a full disk: skipped by every read, and counted once, until a delete succeeds
    }
  }

  /** A per-source table's newest limit rows by column (the rows' last); older ones are deleted, so junk sources
   * with ever new names cannot grow the table (a full disk: pruned at a later start). */
  newestRows(table, columns, column, limit) {
    const rows = this.db.prepare(`SELECT ${columns} FROM ${table} ORDER BY ${column} DESC LIMIT ?`).raw()
      .all(limit + 1);
    if (rows.length > limit) {
      try {
        this.changes += this.db.prepare(`DELETE FROM ${table} WHERE ${column} < ?`).run(rows.at(limit - 1).at(-1))
          .changes;
      } catch (error) {
        onlySqliteErrors(error);
      }
    }
    return rows.slice(0, limit);
  }

  /** Deletes up to count of the oldest frames; returns how many. */
  dropOldest(count) {
    const dropped = this.db.prepare('DELETE FROM frames WHERE id IN (SELECT id FROM frames ORDER BY id LIMIT ?)')
      .run(count).changes;
    this.depth -= dropped;
    this.changes += dropped;
    return dropped;
  }

  close() {
    this.reader.close();
    try {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch (error) {
      onlySqliteErrors(error); // e.g. a full disk: the WAL keeps the frames and is checkpointed at the next start
    } finally {
      this.db.close();
    }
  }
}
