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
// headroom above it, so frames already read still fit. A full disk is met with a reserve file beside the spool
// (spool-room.js), given up in parts so that what was read is kept and the spool still drains. Reading stays paused
// (room() says "disk") until the disk has room for the whole reserve again plus a margin (none once the file holds
// no frame). A low disk also has the WAL checkpointed and cut to nothing, since a WAL keeps its largest size
// (journal_size_limit trims it only when it restarts), and a drained spool gives its free pages back (VACUUM).
//
// source_seqs: each commit with frames stores the newest seq per source among them (safe-seqs.js), so the next
// run continues each source's seqs (gateway/contract/spool.md, "Seqs across a restart").
//
// Durability (fsync): "batch" is synchronous=NORMAL plus an fsync of the WAL after each commit, off the event
// loop (wal-sync.js: whenDurable()), before the commit's frames count as spooled: synchronous=FULL's promise;
// "interval" is synchronous=NORMAL, commits reach the OS at once and are fsynced by the checkpoint the service
// runs every fsync_interval_ms (SQLite syncs the WAL before it copies it). "deferred" (the default) holds frames in
// memory first: spool-deferred.js, built on this class.

import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

import { packValues } from './reading-values.js';
import { newestSeqs } from './safe-seqs.js';
import { FrameInserts } from './frame-inserts.js';
import { BUSY_TIMEOUT_MS, FORMAT_VERSION, SpoolFormatError, WAL_KEEP_BYTES, connect, openFormat } from
  './spool-schema.js';
import { DISK_FULL_BYTES, DRAIN_RESERVE_BYTES, ROOM_MARGIN_BYTES, Reserve, deleteInSteps, diskFree, giveBackFreePages,
  isDiskError, onlySqliteErrors, truncateWal } from './spool-room.js';
import { WalSync } from './wal-sync.js';

export { BUSY_TIMEOUT_MS, FORMAT_VERSION, SpoolFormatError, WAL_KEEP_BYTES };
export { DELETE_STEP_FRAMES, DISK_FULL_BYTES, DRAIN_RESERVE_BYTES, RESERVE_BYTES, ROOM_MARGIN_BYTES } from
  './spool-room.js';
// Above the cap, for frames read before reading paused: the inputs' credits, a few 16 KiB reads each.
export const CAP_HEADROOM = 4 << 20;
const NO_PAGE_LIMIT = 2 ** 31 - 2; // SQLite's largest max_page_count

/** No room: the spool's cap (SQLite max_page_count) or the disk itself. Nothing of the commit was written. */
export class SpoolFull extends Error {
  constructor(message, capReached, options) {
    super(message, options);
    this.name = 'SpoolFull';
    this.capReached = capReached;
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

export class Spool {
  /** Opens (or creates) the spool at path; fsync "batch" or "interval" ("deferred": DeferredSpool); reading pauses
   * at maxBytes. */
  constructor(path, { fsync = 'batch', maxBytes = 1 << 30 } = {}) {
    this.path = String(path);
    this.reservePath = `${this.path}.reserve`;
    this._reserve = new Reserve(this.reservePath);
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
    openFormat(this._db, this.path);
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

  /** Frames in the spool file (as of the last commit): what a crash keeps. */
  get fileFrames() {
    return this._diskDepth;
  }

  _prepare() {
    const db = this._db;
    this._inserts = new FrameInserts(db);
    this._deleteRange = db.prepare('DELETE FROM frames WHERE id BETWEEN ? AND ?');
    this._saveStamp = db.prepare('INSERT OR REPLACE INTO receipt_stamps (source, last_ts_ms) VALUES (?, ?)');
    this._saveSeq = db.prepare('INSERT OR REPLACE INTO source_seqs (source, seq, ts_ms) VALUES (?, ?, ?)');
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
    return new Map(this._newestRows('receipt_stamps', 'source, last_ts_ms', 'last_ts_ms', limit));
  }

  /** The newest limit sources' last safe seqs as an earlier run stored them: a Map source → [seq, ts_ms], newest
   * first (by ts_ms); older rows are pruned as lastReceiptStamps() prunes. */
  lastSourceSeqs(limit = 1000) {
    return new Map(this._newestRows('source_seqs', 'source, seq, ts_ms', 'ts_ms', limit)
      .map(([source, seq, tsMs]) => [source, [seq, tsMs]]));
  }

  /** A per-source table's newest limit rows by column; the older ones deleted (if the disk lets it). */
  _newestRows(table, columns, column, limit) {
    const rows = this._db.prepare(`SELECT ${columns} FROM ${table} ORDER BY ${column} DESC LIMIT ?`).raw()
      .all(limit + 1);
    if (rows.length > limit) {
      try {
        this._changes += this._db.prepare(`DELETE FROM ${table} WHERE ${column} < ?`).run(rows.at(limit - 1).at(-1))
          .changes;
      } catch (error) {
        onlySqliteErrors(error); // a full disk: pruned at a later start
      }
    }
    return rows.slice(0, limit);
  }

  /** One transaction: delete acknowledged frames (inclusive [first, last] id ranges), append new ones (from
   * newFrame()), record the sources' last receipt stamps (Map or object source → ms) and the newest seq per
   * source among the new frames. On a full disk a part of the reserve is given up and the commit tried once more.
   * Throws SpoolFull when there is no room; then no new frame was written (acknowledged ones may have been
   * deleted, in steps: deleting them again is harmless). Returns how many frames went into the file. */
  commit(frames, acked, receiptStamps = null) {
    this._commitWithRoom(frames, acked, stampEntries(receiptStamps), [...newestSeqs(frames)]);
    return frames.length;
  }

  /** Whether frames may be held in memory now: never here (DeferredSpool holds while that is safe). */
  get holding() {
    return false;
  }

  /** The sender's link to Cassandra changed (connected; its last write succeeded): nothing to do here. Returns
   * whether held frames became due at once (DeferredSpool). */
  setLink(_connected, _writeOk) { // eslint-disable-line no-unused-vars
    return false;
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

  /** The commit of frames, acked (id ranges), stamps ([source, ms] pairs) and seqs ([source, [seq, ts_ms]]
   * pairs), with the full disk's remedies. */
  _commitWithRoom(frames, acked, stamps, seqs = []) {
    try {
      this._commitOnce(frames, acked, stamps, seqs);
    } catch (error) {
      if (!(error instanceof SpoolFull) || error.capReached) throw error;
      if (this._releaseReserve(frames.length ? DRAIN_RESERVE_BYTES : 0)) {
        this._commitOnce(frames, acked, stamps, seqs);
        return;
      }
      if (acked.length) {
        this._releaseReserve(0);
        const deleted = deleteInSteps(this._db, this._deleteRange, acked, BUSY_TIMEOUT_MS);
        this._diskDepth -= deleted;
        this._changes += deleted;
      }
      if (frames.length > 0 || stamps.length > 0 || seqs.length > 0) throw error;
    }
  }

  _commitOnce(frames, acked, stamps, seqs = []) {
    let deleted = 0;
    try {
      this._db.exec('BEGIN IMMEDIATE');
      for (const [first, last] of acked) deleted += this._deleteRange.run(first, last).changes;
      if (frames.length > 0) this._inserts.run(frames);
      for (const [source, lastTsMs] of stamps) this._saveStamp.run(source, lastTsMs);
      for (const [source, [seq, tsMs]] of seqs) this._saveSeq.run(source, seq, tsMs);
      this._db.exec('COMMIT');
    } catch (error) {
      if (this._db.inTransaction) this._db.exec('ROLLBACK');
      if (isDiskError(error)) {
        throw new SpoolFull(error.message, diskFree(this.path) >= DISK_FULL_BYTES, { cause: error });
      }
      throw error;
    }
    this._diskDepth += frames.length - deleted;
    this._changes += deleted + frames.length + stamps.length + seqs.length;
  }

  /** null while reading may go on; "cap" when the spool holds maxBytes, "disk" while its disk has no room for
   * the reserve (and a margin, while the file holds frames). A low disk has the WAL cut, and a drained spool's
   * free pages given back, at each check until there is room. */
  room() {
    if (this.diskLow) {
      this.diskLow = !this._keepReserve();
      if (this.diskLow && truncateWal(this._db, BUSY_TIMEOUT_MS)) this.diskLow = !this._keepReserve();
      if (this.diskLow && this._diskDepth === 0 && giveBackFreePages(this._db, BUSY_TIMEOUT_MS)) {
        this._changes += 1; // the file changed: its pages in use are counted again
        this.diskLow = !this._keepReserve();
      }
      if (this.diskLow) return 'disk';
    }
    return this._usedPages() >= this._capPages ? 'cap' : null;
  }

  /** At shutdown: frames already read go in past the cap rather than being lost. */
  liftCap() {
    this._maxPages = NO_PAGE_LIMIT;
    this._db.pragma(`max_page_count = ${this._maxPages}`);
  }

  /** The reserve file is there, or is made now if the disk has room for it and the margin (waived once the file
   * holds no frame: on a small disk a drained spool may never leave the margin). */
  _keepReserve() {
    return this._reserve.keep(this._diskDepth === 0 ? 0 : ROOM_MARGIN_BYTES);
  }

  /** Gives the reserve's room beyond keep bytes to the spool; false if there was none. Reading pauses. */
  _releaseReserve(keep) {
    this.diskLow = true;
    return this._reserve.release(keep);
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

  /** Call once whenDurable() has resolved (no fsync running). Returns the frames lost at the close: none here
   * (DeferredSpool: held frames it could not commit). */
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
    return 0;
  }
}
