// The durable spool: every accepted frame is committed here before it is sent, and removed only after Cassandra
// acknowledged it. Its schema is the contract's gateway/contract/spool.sql (spool-schema.js), its rules are
// gateway/contract/spool.md; this is the Python gateway's spool.py, so either gateway drains the other's spool.
//
// SQLite in WAL mode, through better-sqlite3, whose calls are synchronous: a Spool lives on the event loop's one
// thread, so nothing runs beside a commit and no locks are needed. Two connections, as spool.md has them: the
// writer (group commits, deletes, the truncating checkpoints of a low disk) and one of its own for take() and the
// timer's passive checkpoint(). SQLite's automatic checkpoint is off: it would run inside whichever commit
// crosses 1,000 WAL pages and hold that group's frames for the time of the copy and its fsync.
// Frame ids come from AUTOINCREMENT so they only grow: a reader's cursor never skips a frame, even after the
// spool was emptied. Frames go in by multi-row INSERTs of a few fixed sizes (one statement step per 128 frames).
//
// Room: the cap (maxBytes) is where reading pauses (room() says "cap"); SQLite's own max_page_count sits a
// headroom above it, so frames already read still fit. A full disk is met with a reserve file beside the spool,
// given up in two parts: when a commit of new frames finds the disk full, all but DRAIN_RESERVE_BYTES of it goes
// and the commit is retried, so what was read is kept; the rest goes only to delete acknowledged frames or to open
// the spool, so a spool on a disk that stays full still drains, even after a restart. Reading stays paused
// (room() says "disk") until the disk has room for the whole reserve again plus a margin. A low disk also has the
// WAL checkpointed and cut to nothing, since a WAL keeps its largest size (journal_size_limit trims it only when it
// restarts).
//
// Durability (fsync): "batch" is synchronous=NORMAL plus an fsync of the WAL after each commit, off the event
// loop (wal-sync.js: whenDurable()), before the commit's frames count as spooled: synchronous=FULL's promise;
// "interval" is synchronous=NORMAL, commits reach the OS at once and are fsynced by the checkpoint the service
// runs every fsync_interval_ms (SQLite syncs the WAL before it copies it). "deferred" (the default) holds frames in
// memory first: spool-deferred.js, built on this class.

import { closeSync, constants, existsSync, fsyncSync, mkdirSync, openSync, rmSync, statSync, statfsSync,
  truncateSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

import Database from 'better-sqlite3';

import { packValues } from './reading-values.js';
import { WalSync } from './wal-sync.js';
import { FORMAT_VERSION, SCHEMA_SQL } from './spool-schema.js';

export { FORMAT_VERSION };
export const RESERVE_BYTES = 1 << 20;
// The reserve's last part: WAL room for deleting acknowledged frames (in steps), never given to new frames.
export const DRAIN_RESERVE_BYTES = 256 << 10;
export const ROOM_MARGIN_BYTES = 1 << 20; // free beyond the reserve before reading resumes: not a flutter
export const DISK_FULL_BYTES = 1 << 20; // a refused commit with less than this free was refused by the disk
// Above the cap, for frames read before reading paused: the inputs' credits, a few 16 KiB reads each.
export const CAP_HEADROOM = 4 << 20;
export const BUSY_TIMEOUT_MS = 5000;
export const WAL_KEEP_BYTES = 1 << 20; // what the WAL file is cut back to when it restarts
export const DELETE_STEP_FRAMES = 256; // acknowledged frames deleted per transaction on a full disk
const NO_PAGE_LIMIT = 2 ** 31 - 2; // SQLite's largest max_page_count

// Rows per INSERT statement, largest first. 128 rows are 640 variables (768 with the id), within any SQLite's limit.
const INSERT_SIZES = [128, 32, 8, 1];
const insertSql = (size, withId) => `INSERT INTO frames (${withId ? 'id, ' : ''}source, ts_ms, received_ms, metrics, `
  + `vals) VALUES ${Array(size).fill(withId ? '(?, ?, ?, ?, ?, ?)' : '(?, ?, ?, ?, ?)').join(',')}`;

/** No room: the spool's cap (SQLite max_page_count) or the disk itself. Nothing of the commit was written. */
export class SpoolFull extends Error {
  constructor(message, capReached, options) {
    super(message, options);
    this.name = 'SpoolFull';
    this.capReached = capReached;
  }
}

/** The spool file was written by a newer gateway: refuse it rather than misread it. */
export class SpoolFormatError extends Error {
  constructor(message) {
    super(message);
    this.name = 'SpoolFormatError';
  }
}

/** A frame to commit: {source, ts_ms, received_ms, metrics, vals}, the columns of its row. */
export function newFrame(source, tsMs, receivedMs, values) {
  return { source, ts_ms: tsMs, received_ms: receivedMs, ...packValues(values) };
}

/** SQLite's or the file system's word for a full disk (or a write it could not do). */
function isDiskError(error) {
  const code = typeof error?.code === 'string' ? error.code : '';
  return code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR') || code === 'ENOSPC';
}

/** Rethrows anything but an error of SQLite (Python's sqlite3.Error): those are the caller's to swallow. */
function onlySqliteErrors(error) {
  if (!(error instanceof Database.SqliteError)) throw error;
}

/** Receipt stamps as [source, lastTsMs] pairs, from a Map, a plain object, pairs or nothing. */
export function stampEntries(stamps) {
  if (stamps == null) return [];
  if (stamps instanceof Map) return [...stamps];
  return Array.isArray(stamps) ? stamps : Object.entries(stamps);
}

function insertParams(frames, start, size, withId) {
  const params = new Array(size * (withId ? 6 : 5));
  let p = 0;
  for (let i = start; i < start + size; i++) {
    const frame = frames[i];
    if (withId) params[p++] = frame.id;
    params[p++] = frame.source;
    params[p++] = frame.ts_ms;
    params[p++] = frame.received_ms;
    params[p++] = frame.metrics;
    params[p++] = frame.vals;
  }
  return params;
}

function connect(path, synchronous) {
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    // Nothing here writes to a spool that is already set up, so it opens on a full disk.
    if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous}`);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('wal_autocheckpoint = 0'); // checkpoint() does it, off the commit path
    // A WAL is reused, not shrunk, after a checkpoint: without a limit it keeps its largest size on the disk.
    db.pragma(`journal_size_limit = ${WAL_KEEP_BYTES}`);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

// Node has no posix_fallocate: writing the zeros and fsyncing them allocates real blocks on ext4, xfs and tmpfs
// (a sparse file would reserve nothing). A file system that compresses or deduplicates (zfs, btrfs with
// compression) may store them in next to nothing, as it may glibc's posix_fallocate fallback.
function writeReserve(path) {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT, 0o600);
  try {
    const zeros = Buffer.alloc(RESERVE_BYTES);
    for (let done = 0; done < RESERVE_BYTES;) done += writeSync(fd, zeros, done, RESERVE_BYTES - done, done);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export class Spool {
  /** Opens (or creates) the spool at path; fsync "batch" or "interval" ("deferred": DeferredSpool); reading pauses
   * at maxBytes. */
  constructor(path, { fsync = 'batch', maxBytes = 1 << 30 } = {}) {
    this.path = String(path);
    this.reservePath = `${this.path}.reserve`;
    mkdirSync(dirname(this.path), { recursive: true });
    /** SQLite deletes the WAL file when its last connection closes cleanly: one left over means a crash. */
    this.uncleanStop = existsSync(`${this.path}-wal`);
    // "batch" adds an fsync of the WAL after each commit (whenDurable()); "deferred" commits rarely, each fsynced.
    const synchronous = fsync === 'deferred' ? 'FULL' : 'NORMAL';
    /** With fsync "batch": commits are durable once whenDurable() resolves; null with "interval". */
    this.walSync = fsync === 'batch' ? new WalSync(`${this.path}-wal`) : null;
    try {
      this._connectAndOpen(synchronous, maxBytes);
    } catch (error) {
      // Opening (the WAL index, a first write) needed room: the reserve's first part, or its last.
      if (!isDiskError(error) || !(this._releaseReserve(DRAIN_RESERVE_BYTES) || this._releaseReserve(0))) throw error;
      this._connectAndOpen(synchronous, maxBytes);
    }
  }

  _connectAndOpen(synchronous, maxBytes) {
    this._db = connect(this.path, synchronous);
    try {
      this._open(synchronous, maxBytes);
    } catch (error) {
      this._reader?.close();
      this._db.close();
      throw error;
    }
  }

  _open(synchronous, maxBytes) {
    this._upgradeFormat();
    const tables = new Set(this._db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all());
    if (!tables.has('frames') || !tables.has('receipt_stamps')) {
      this._db.exec('BEGIN IMMEDIATE');
      this._db.exec(SCHEMA_SQL); // gateway/contract/spool.sql, in the transaction: tables, format version
      this._db.exec('COMMIT');
    }
    if (this._db.pragma('user_version', { simple: true }) !== FORMAT_VERSION) {
      this._db.pragma(`user_version = ${FORMAT_VERSION}`);
    }
    this._pageSize = this._db.pragma('page_size', { simple: true });
    this._reader = connect(this.path, synchronous);
    this._prepare();
    // The cap is where reading pauses (room()); SQLite's limit, above it, refuses a write like a full disk.
    this._capPages = Math.max(16, Math.floor(maxBytes / this._pageSize));
    this._maxPages = this._capPages + Math.floor(CAP_HEADROOM / this._pageSize);
    this._db.pragma(`max_page_count = ${this._maxPages}`);
    this._diskDepth = this._db.prepare('SELECT count(*) FROM frames').pluck().get();
    /** The disk had no room for the reserve (and its margin) at the last look: reading pauses. */
    this.diskLow = !this._keepReserve();
  }

  /** Frames not yet acknowledged. */
  get depth() {
    return this._diskDepth;
  }

  _upgradeFormat() {
    const version = this._db.pragma('user_version', { simple: true });
    if (version > FORMAT_VERSION) {
      throw new SpoolFormatError(`${this.path} is spool format ${version}; this gateway reads up to `
        + `${FORMAT_VERSION}: upgrade the gateway or move the file away`);
    }
    const columns = this._db.pragma('table_info(frames)').map((column) => column.name);
    if (columns.length === 0 || columns.includes('metrics')) return;
    // Format 1: values as JSON text, [["temp_in",21.5],["light",3]]; converted once, in place.
    this._db.exec('BEGIN IMMEDIATE');
    this._db.exec('ALTER TABLE frames RENAME TO frames_format1');
    this._db.exec(SCHEMA_SQL);
    const old = this._db.prepare('SELECT id, source, ts_ms, received_ms, vals FROM frames_format1').all();
    const insert = this._db.prepare('INSERT INTO frames (id, source, ts_ms, received_ms, metrics, vals) '
      + 'VALUES (?, ?, ?, ?, ?, ?)');
    for (const row of old) {
      const { metrics, vals } = packValues(JSON.parse(row.vals).map(([name, value]) => [name, Number(value)]));
      insert.run(row.id, row.source, row.ts_ms, row.received_ms, metrics, vals);
    }
    this._db.exec('DROP TABLE frames_format1');
    this._db.exec('COMMIT');
  }

  _prepare() {
    const db = this._db;
    this._inserts = new Map(INSERT_SIZES.map((size) => [size, db.prepare(insertSql(size, false))]));
    this._insertsWithId = new Map(INSERT_SIZES.map((size) => [size, db.prepare(insertSql(size, true))]));
    this._deleteRange = db.prepare('DELETE FROM frames WHERE id BETWEEN ? AND ?');
    this._saveStamp = db.prepare('INSERT OR REPLACE INTO receipt_stamps (source, last_ts_ms) VALUES (?, ?)');
    this._pageCount = db.prepare('PRAGMA page_count').pluck();
    this._freelistCount = db.prepare('PRAGMA freelist_count').pluck();
    this._changes = 0; // rows changed through the writer (Python's total_changes): the file changed
    this._usedPagesAt = -1; // _changes when the pages in use were counted
    // vals as hex, made into Buffers here: better-sqlite3 gives each blob a Buffer with a backing store of its own
    // (a malloc and the GC's external-memory accounting per frame); a Buffer from a string comes from Node's pool.
    // A take of 250k frames: 0.7 s of CPU as blobs, 0.44 s as hex.
    this._take = this._reader.prepare('SELECT id, source, ts_ms, received_ms, metrics, hex(vals) AS vals FROM frames '
      + 'WHERE id > ? ORDER BY id LIMIT ?');
  }

  /** Bytes of the pages in use (page_count − freelist_count): what the cap is measured in. */
  usedBytes() {
    return this._usedPages() * this._pageSize;
  }

  /** Asked at every read's commit and every second: counted again only after a write changed the file. */
  _usedPages() {
    if (this._usedPagesAt !== this._changes) {
      this._usedPagesAt = this._changes;
      this._usedPagesCount = this._pageCount.get() - this._freelistCount.get();
    }
    return this._usedPagesCount;
  }

  /** The newest limit sources' last receipt stamps, a Map source → ms, newest first; older rows are pruned, so
   * junk sources cannot grow the table (a forgotten source restarts above the newest stamp forgotten). */
  lastReceiptStamps(limit = 1000) {
    const rows = this._db.prepare('SELECT source, last_ts_ms FROM receipt_stamps ORDER BY last_ts_ms DESC '
      + 'LIMIT ?').raw().all(limit + 1);
    if (rows.length > limit) {
      try {
        this._changes += this._db.prepare('DELETE FROM receipt_stamps WHERE last_ts_ms < ?')
          .run(rows.at(limit - 1)[1]).changes;
      } catch (error) {
        onlySqliteErrors(error); // a full disk: pruned at a later start
      }
    }
    return new Map(rows.slice(0, limit));
  }

  /** One transaction: delete acknowledged frames (inclusive [first, last] id ranges), append new ones (from
   * newFrame()), record the sources' last receipt stamps (Map or object source → ms). On a full disk a part of
   * the reserve is given up and the commit tried once more. Throws SpoolFull when there is no room; then no new
   * frame was written (acknowledged ones may have been deleted, in steps: deleting them again is harmless).
   * Returns how many frames went into the file. */
  commit(frames, acked, receiptStamps = null) {
    this._commitWithRoom(frames, acked, stampEntries(receiptStamps));
    return frames.length;
  }

  /** Frames held in memory, not in the file: none here (DeferredSpool holds some). */
  get heldFrames() {
    return 0;
  }

  /** Commits what is held in memory, at a clean stop: nothing here. Returns the frames written. */
  commitHeld() {
    return 0;
  }

  /** Milliseconds until held frames are due for a commit; null: none held (always here). */
  flushDelayMs() {
    return null;
  }

  /** The commit of frames, acked (id ranges) and stamps ([source, ms] pairs), with the full disk's remedies. */
  _commitWithRoom(frames, acked, stamps) {
    try {
      this._commitOnce(frames, acked, stamps);
    } catch (error) {
      if (!(error instanceof SpoolFull) || error.capReached) throw error;
      if (this._releaseReserve(frames.length ? DRAIN_RESERVE_BYTES : 0)) {
        this._commitOnce(frames, acked, stamps);
        return;
      }
      if (acked.length) {
        this._releaseReserve(0);
        this._deleteInSteps(acked);
      }
      if (frames.length > 0 || stamps.length > 0) throw error;
    }
  }

  /** On a disk with no room left, deletes acknowledged frames a few pages at a time, cutting the WAL back after
   * each step: the one transaction deleting them all may need more WAL than the disk has, and would only grow
   * while it keeps failing. Stops at the first step that does not fit; deleting again is harmless. */
  _deleteInSteps(acked) {
    for (const [first, last] of acked) {
      for (let start = first; start <= last; start += DELETE_STEP_FRAMES) {
        let deleted;
        try {
          deleted = this._deleteRange.run(start, Math.min(last, start + DELETE_STEP_FRAMES - 1)).changes;
        } catch (error) {
          onlySqliteErrors(error);
          if (this._db.inTransaction) this._db.exec('ROLLBACK');
          return;
        }
        this._diskDepth -= deleted;
        this._changes += deleted;
        this._checkpointTruncate();
      }
    }
  }

  _commitOnce(frames, acked, stamps) {
    let deleted = 0;
    try {
      this._db.exec('BEGIN IMMEDIATE');
      for (const [first, last] of acked) deleted += this._deleteRange.run(first, last).changes;
      if (frames.length > 0) this._insert(frames);
      for (const [source, lastTsMs] of stamps) this._saveStamp.run(source, lastTsMs);
      this._db.exec('COMMIT');
    } catch (error) {
      if (this._db.inTransaction) this._db.exec('ROLLBACK');
      if (isDiskError(error)) {
        throw new SpoolFull(error.message, this._diskFree() >= DISK_FULL_BYTES, { cause: error });
      }
      throw error;
    }
    this._diskDepth += frames.length - deleted;
    this._changes += deleted + frames.length + stamps.length;
  }

  /** Frames with an id (held ones) keep it; new ones get theirs from AUTOINCREMENT. */
  _insert(frames) {
    const withId = frames[0].id !== undefined;
    const inserts = withId ? this._insertsWithId : this._inserts;
    let start = 0;
    for (const size of INSERT_SIZES) {
      const insert = inserts.get(size);
      for (; frames.length - start >= size; start += size) insert.run(insertParams(frames, start, size, withId));
    }
  }

  /** null while reading may go on; "cap" when the spool holds maxBytes, "disk" while its disk has no room for
   * the reserve (and a margin). */
  room() {
    if (this.diskLow) {
      this.diskLow = !this._keepReserve();
      if (this.diskLow && this._checkpointTruncate()) this.diskLow = !this._keepReserve();
      if (this.diskLow) return 'disk';
    }
    return this._usedPages() >= this._capPages ? 'cap' : null;
  }

  /** At shutdown: frames already read go in past the cap rather than being lost. */
  liftCap() {
    this._maxPages = NO_PAGE_LIMIT;
    this._db.pragma(`max_page_count = ${this._maxPages}`);
  }

  _diskFree() {
    const stats = statfsSync(dirname(this.path));
    return stats.bavail * stats.bsize;
  }

  /** The reserve file is there, or is made now if the disk has room for it and the margin. */
  _keepReserve() {
    const stats = statSync(this.reservePath, { throwIfNoEntry: false });
    if (stats !== undefined && stats.size >= RESERVE_BYTES) return true;
    if (this._diskFree() < RESERVE_BYTES + ROOM_MARGIN_BYTES) return false;
    try {
      writeReserve(this.reservePath);
    } catch {
      rmSync(this.reservePath, { force: true });
      return false;
    }
    return true;
  }

  /** On a low disk, copies the WAL into the database and cuts it to nothing: the WAL of a spool that grew while
   * Cassandra was away can hold most of the disk. False if readers or the disk did not let it. */
  _checkpointTruncate() {
    try {
      this._db.pragma('busy_timeout = 0'); // a reader busy now: try at the next room check
      const [{ busy }] = this._db.pragma('wal_checkpoint(TRUNCATE)');
      return busy === 0;
    } catch (error) {
      onlySqliteErrors(error);
      return false;
    } finally {
      this._db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /** Gives the reserve's room beyond keep bytes to the spool; false if there was none. */
  _releaseReserve(keep) {
    this.diskLow = true;
    try {
      if (statSync(this.reservePath).size <= keep) return false;
      if (keep) truncateSync(this.reservePath, keep);
      else unlinkSync(this.reservePath);
    } catch (error) {
      if (error.code === 'ENOENT') return false;
      throw error;
    }
    return true;
  }

  /** The oldest frames with an id above afterId: [{id, source, ts_ms, received_ms, metrics, vals (Buffer)}]. */
  take(afterId, limit) {
    const frames = this._take.all(afterId, limit);
    for (const frame of frames) frame.vals = Buffer.from(frame.vals, 'hex');
    return frames;
  }

  /** Deletes up to count of the oldest frames (the when_full = drop_oldest policy); returns how many. */
  dropOldest(count) {
    const dropped = this._db.prepare('DELETE FROM frames WHERE id IN (SELECT id FROM frames ORDER BY id LIMIT ?)')
      .run(count).changes;
    this._diskDepth -= dropped;
    this._changes += dropped;
    return dropped;
  }

  /** Copies the WAL into the database file without blocking commits or reads (PASSIVE): the pages of
   * transactions still being read stay for the next call. With synchronous=NORMAL this is the fsync of the
   * interval policy. Returns [pages in the WAL, pages checkpointed]. */
  checkpoint() {
    const [{ log, checkpointed }] = this._reader.pragma('wal_checkpoint(PASSIVE)');
    return [log, checkpointed];
  }

  /** Whether the service's periodic checkpoint() should run now: always here (DeferredSpool says less often). */
  checkpointDue() {
    return true;
  }

  /** Resolves once every commit so far is on the disk (fsync "batch"; at once with "interval"). */
  whenDurable() {
    return this.walSync === null ? Promise.resolve() : this.walSync.whenDurable();
  }

  /** Call once whenDurable() has resolved (no fsync running). */
  close() {
    this.walSync?.close();
    this._reader.close();
    try {
      this._db.pragma('wal_checkpoint(TRUNCATE)');
    } catch (error) {
      onlySqliteErrors(error); // e.g. a full disk: the WAL keeps the frames and is checkpointed at the next start
    } finally {
      this._db.close();
    }
  }
}
