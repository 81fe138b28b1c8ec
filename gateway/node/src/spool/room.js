// Room for the spool (gateway/contract/spool.md, "Room" and "Full disk"): the cap, the reserve file beside the spool,
// what a full disk gets back from the spool file, and the checkpoints that copy the WAL into it.
//
// The cap (maxBytes) is where reading pauses (room() says "cap"); SQLite's own max_page_count sits a headroom above
// it, so frames already read still fit. A full disk is met with the reserve (RESERVE_BYTES), given up in two parts:
// when a commit of new frames finds the disk full, all but DRAIN_RESERVE_BYTES of it goes and the commit is retried,
// so what was read is kept; the rest goes only to delete acknowledged frames or to open the spool, so a spool on a
// disk that stays full still drains. Reading stays paused (room() says "disk") until the reserve could be made again
// with ROOM_MARGIN_BYTES to spare (room for a while, not a flutter); the margin is waived once the spool file holds
// no frame: on a small disk a drained spool may never leave it. A low disk also has the WAL checkpointed and cut to
// nothing, since a WAL keeps its largest size (journal_size_limit trims it only when it restarts), and a drained
// spool gives its free pages back (VACUUM).
//
// SQLite's automatic checkpoint is off: it would run inside whichever commit crosses 1,000 WAL pages and hold that
// group's frames for the copy and its fsync. checkpoint() runs on the reader's connection, from the service's timer.

import { closeSync, constants, fsyncSync, openSync, rmSync, statSync, truncateSync, unlinkSync,
  writeSync } from 'node:fs';

import { BUSY_TIMEOUT_MS } from './schema.js';
import { SpoolFull, diskFree, onlySqliteErrors } from './store.js';

export const RESERVE_BYTES = 1 << 20;
// The reserve's last part: WAL room for deleting acknowledged frames (in steps), never given to new frames.
export const DRAIN_RESERVE_BYTES = 256 << 10;
export const ROOM_MARGIN_BYTES = 1 << 20; // free beyond the reserve before reading resumes: not a flutter
// Above the cap, for frames read before reading paused: the inputs' credits, a few 16 KiB reads each.
export const CAP_HEADROOM = 4 << 20;
const NO_PAGE_LIMIT = 2 ** 31 - 2; // SQLite's largest max_page_count
export const DELETE_STEP_FRAMES = 256; // acknowledged frames deleted per transaction on a full disk

// No posix_fallocate here: writing the zeros and fsyncing them allocates real blocks on ext4, xfs and tmpfs (a
// sparse file would reserve nothing). A file system that compresses or deduplicates (zfs, btrfs with compression)
// may store them in next to nothing.
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

/** The reserve file at path (the spool's path + ".reserve"). */
export class Reserve {
  constructor(path) {
    this.path = path;
  }

  /** The reserve file is whole, or is made now if the disk has room for what it lacks and margin bytes more. */
  keep(margin) {
    const kept = statSync(this.path, { throwIfNoEntry: false })?.size ?? 0; // what a full disk left of it
    if (kept >= RESERVE_BYTES) return true;
    if (diskFree(this.path) < RESERVE_BYTES - kept + margin) return false;
    try {
      writeReserve(this.path);
    } catch {
      if (kept) truncateSync(this.path, kept); // the part it had is still the drain's
      else rmSync(this.path, { force: true });
      return false;
    }
    return true;
  }

  /** Gives the reserve's room beyond keep bytes to the disk; false if there was none. */
  release(keep) {
    try {
      if (statSync(this.path).size <= keep) return false;
      if (keep) truncateSync(this.path, keep);
      else unlinkSync(this.path);
    } catch (error) {
      if (error.code === 'ENOENT') return false;
      throw error;
    }
    return true;
  }
}

export class Room {
  /** store: the spool's Store; reserve: its Reserve; reading pauses at maxBytes; clock: monotonic ms. */
  constructor(store, reserve, maxBytes, clock) {
    this._store = store;
    this._reserve = reserve;
    this._clock = clock;
    this.checkpointed = [store.changes, clock()]; // rows changed and the time at the last checkpoint
    this._pageCount = store.db.prepare('PRAGMA page_count').pluck();
    this._freelistCount = store.db.prepare('PRAGMA freelist_count').pluck();
    this._usedPagesAt = -1; // store.changes when the pages in use were counted
    // The cap is where reading pauses (room()); SQLite's limit, above it, refuses a write like a full disk.
    this._capPages = Math.max(16, Math.floor(maxBytes / store.pageSize));
    store.db.pragma(`max_page_count = ${this._capPages + Math.floor(CAP_HEADROOM / store.pageSize)}`);
    /** The disk had no room for the reserve (and its margin) at the last look: reading pauses. */
    this.diskLow = !this.keepReserve();
  }

  /** null while reading may go on; "cap" when the spool holds maxBytes, "disk" while its disk has no room for
   * the reserve (and a margin, while the file holds frames). A low disk has the WAL cut, and a drained spool's
   * free pages given back, at each check until there is room. */
  room() {
    if (this.diskLow) {
      this.diskLow = !this.keepReserve();
      if (this.diskLow && this._truncateWal()) this.diskLow = !this.keepReserve();
      if (this.diskLow && this._store.depth === 0 && this._giveBackFreePages()) {
        this._store.changes += 1; // the file changed: its pages in use are counted again
        this.diskLow = !this.keepReserve();
      }
      if (this.diskLow) return 'disk';
    }
    return this._usedPages() >= this._capPages ? 'cap' : null;
  }

  /** At shutdown: frames already read go in past the cap rather than being lost. */
  liftCap() {
    this._store.db.pragma(`max_page_count = ${NO_PAGE_LIMIT}`);
  }

  /** Bytes of the pages in use (page_count − freelist_count): what the cap is measured in. */
  usedBytes() {
    return this._usedPages() * this._store.pageSize;
  }

  /** Asked at every read's commit and every second: counted again only after a write changed the file. */
  _usedPages() {
    if (this._usedPagesAt !== this._store.changes) {
      this._usedPagesAt = this._store.changes;
      this._usedPagesCount = this._pageCount.get() - this._freelistCount.get();
    }
    return this._usedPagesCount;
  }

  /** The reserve file is there, or is made now if the disk has room for it and the margin (waived once the file
   * holds no frame). */
  keepReserve() {
    return this._reserve.keep(this._store.depth === 0 ? 0 : ROOM_MARGIN_BYTES);
  }

  /** Gives the reserve's room beyond keep bytes to the spool; false if there was none. Reading pauses. */
  releaseReserve(keep) {
    this.diskLow = true;
    return this._reserve.release(keep);
  }

  /** The store's commit, with the full disk's remedies. */
  commit(frames, acked, stamps, seqs = []) {
    try {
      this._store.commit(frames, acked, stamps, seqs);
    } catch (error) {
      if (!(error instanceof SpoolFull) || error.capReached) throw error;
      if (this.releaseReserve(frames.length ? DRAIN_RESERVE_BYTES : 0)) {
        this._store.commit(frames, acked, stamps, seqs);
        return;
      }
      if (acked.length) {
        this.releaseReserve(0);
        this._deleteInSteps(acked);
      }
      if (frames.length > 0 || stamps.length > 0 || seqs.length > 0) throw error;
    }
  }

  /** On a disk with no room left, deletes acknowledged frames a few pages at a time, cutting the WAL back after
   * each step: the one transaction deleting them all may need more WAL than the disk has, and would only grow while
   * it keeps failing. Stops at the first step that does not fit (deleting again is harmless). */
  _deleteInSteps(acked) {
    const { db } = this._store;
    for (const [first, last] of acked) {
      for (let start = first; start <= last; start += DELETE_STEP_FRAMES) {
        try {
          this._store.deleteRange(start, Math.min(last, start + DELETE_STEP_FRAMES - 1));
        } catch (error) {
          onlySqliteErrors(error);
          if (db.inTransaction) db.exec('ROLLBACK');
          return;
        }
        this._truncateWal();
      }
    }
  }

  /** Copies the WAL into the database and cuts it to nothing (readers busy now: false, tried at the next room
   * check): the WAL of a spool that grew while Cassandra was away can hold most of the disk. False if readers or
   * the disk did not let it. */
  _truncateWal() {
    const { db } = this._store;
    try {
      db.pragma('busy_timeout = 0');
      const [{ busy }] = db.pragma('wal_checkpoint(TRUNCATE)');
      return busy === 0;
    } catch (error) {
      onlySqliteErrors(error);
      return false;
    } finally {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /** A drained spool on a low disk gives its free pages back: the WAL cut, VACUUM (it rewrites the few pages in
   * use, through the WAL), the WAL cut again. Each step may fail for lack of room: false, and the next room check
   * tries again. */
  _giveBackFreePages() {
    if (!this._truncateWal()) return false;
    try {
      this._store.db.exec('VACUUM');
    } catch (error) {
      onlySqliteErrors(error);
      return false;
    }
    return this._truncateWal();
  }

  /** Copies the WAL into the database file without blocking commits or reads (PASSIVE): the pages of
   * transactions still being read stay for the next call. With synchronous=NORMAL this is the fsync of the
   * interval policy. Returns [pages in the WAL, pages checkpointed]. */
  checkpoint() {
    this.checkpointed = [this._store.changes, this._clock()];
    const [{ log, checkpointed }] = this._store.reader.pragma('wal_checkpoint(PASSIVE)');
    return [log, checkpointed];
  }

  /** Rows changed and milliseconds gone since the last checkpoint: [changed, idleMs]. */
  sinceCheckpoint() {
    const [changesAt, at] = this.checkpointed;
    return [this._store.changes - changesAt, this._clock() - at];
  }
}
