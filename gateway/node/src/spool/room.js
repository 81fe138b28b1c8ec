// Room for the spool (gateway/contract/spool.md, "Room" and "Full disk"): the cap, the reserve file beside the spool,
// what a full disk gets back from the spool file, and the checkpoints that copy the WAL into it.
//
// The cap (maxBytes) is where reading pauses (room() says "cap"); SQLite's own max_page_count sits a headroom above
// it, so frames already read still fit. A full disk is met with the reserve (RESERVE_BYTES), given up in two parts:
// when a commit of new frames finds the disk full, all but DRAIN_RESERVE_BYTES of it goes and the commit is retried,
// so what was read is kept; the rest goes only to delete acknowledged frames or to open the spool, so a spool on a
// disk that stays full still drains. Reading stays paused (room() says "disk") until the reserve could be made again
// with ROOM_MARGIN_BYTES to spare (room for a while, not a flutter); the margin is waived once the spool file holds
// no frame: on a small disk a drained spool may never leave it. A low disk also has the WAL cut to nothing after
// every commit (and at every room check), since a WAL keeps its largest size (journal_size_limit trims it only when
// it restarts), and a drained spool gives its free pages back (VACUUM) before reading resumes.
//
// A WAL can only be cut once the database file took its pages, and pages past the file's end make the file grow: on
// a disk with no room left that checkpoint fails, and the WAL, which holds the room, stays. So a checkpoint refused
// for lack of room gets the reserve's room (its last part too), and the last part is made again from the room the
// cut WAL gave back.
//
// SQLite's automatic checkpoint is off: it would run inside whichever commit crosses 1,000 WAL pages and hold that
// group's frames for the copy and its fsync. checkpoint() runs on the reader's connection, from the service's timer.

import { closeSync, constants, fsyncSync, openSync, rmSync, statSync, truncateSync, unlinkSync,
  writeSync } from 'node:fs';

import { contractNumber } from '../contract-constants.js';
import { BUSY_TIMEOUT_MS } from './schema.js';
import { SpoolFull, diskFree, isDiskError, onlySqliteErrors } from './store.js';

export const RESERVE_BYTES = contractNumber('reserve_bytes');
// The reserve's last part: WAL room for deleting acknowledged frames (in steps), never given to new frames.
export const DRAIN_RESERVE_BYTES = contractNumber('reserve_last_part_bytes');
export const ROOM_MARGIN_BYTES = contractNumber('room_margin_bytes'); // free beyond the reserve before reading resumes
// Above the cap, for frames read before reading paused: the inputs' credits, a few 16 KiB reads each.
export const CAP_HEADROOM = contractNumber('cap_headroom_bytes');
const NO_PAGE_LIMIT = 2 ** 31 - 2; // SQLite's largest max_page_count
// Room checks a drained spool tries to shrink before reading resumes anyway (a reader in the way).
const GIVE_BACK_TRIES = contractNumber('give_back_checks');
export const DELETE_STEP_FRAMES = contractNumber('delete_step_frames'); // acknowledged frames per delete, full disk
// Of the reserve's last part, given at a time to open the spool.
const OPEN_STEP_BYTES = contractNumber('reserve_open_step_bytes');

// No posix_fallocate here: writing the zeros and fsyncing them allocates real blocks on ext4, xfs and tmpfs (a
// sparse file would reserve nothing). A file system that compresses or deduplicates (zfs, btrfs with compression)
// may store them in next to nothing.
function writeReserve(path, size) {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT, 0o600);
  try {
    const zeros = Buffer.alloc(size);
    for (let done = 0; done < size;) done += writeSync(fd, zeros, done, size - done, done);
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

  /** The reserve file holds size bytes, or is made so now, and the disk has room for margin bytes more. */
  keep(margin, size = RESERVE_BYTES) {
    const kept = this.size(); // what a full disk left of it
    const lacking = Math.max(0, size - kept);
    if ((lacking || margin) && diskFree(this.path) < lacking + margin) return false;
    if (!lacking) return true;
    try {
      writeReserve(this.path, size);
    } catch {
      if (kept) truncateSync(this.path, kept); // the part it had is still the drain's
      else rmSync(this.path, { force: true });
      return false;
    }
    return true;
  }

  size() {
    return statSync(this.path, { throwIfNoEntry: false })?.size ?? 0;
  }

  /** Room for opening the spool (its WAL index, a first write): the part above the last one, else OPEN_STEP_BYTES
   * of the last part (the rest stays for the drain); false if there was none. */
  releaseForOpen() {
    const size = this.size();
    return this.release(size > DRAIN_RESERVE_BYTES ? DRAIN_RESERVE_BYTES : Math.max(0, size - OPEN_STEP_BYTES));
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
    this._givenBackAt = -1; // store.changes when a drained spool last gave its free pages back
    this._giveBackTries = 0;
    this._framesKeep = DRAIN_RESERVE_BYTES; // what a commit of new frames leaves of the reserve (0 at a stop)
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
      // A drained spool shrinks before reading resumes (once per change: VACUUM writes the pages in use).
      if (this._store.depth === 0 && this._givenBackAt !== this._store.changes) {
        if (this._giveBackFreePages()) {
          this._store.changes += 1; // the file changed: its pages in use are counted again
          this._givenBackAt = this._store.changes;
        } else if (++this._giveBackTries < GIVE_BACK_TRIES) {
          return 'disk'; // a reader in the way: tried again at the next room check
        } else {
          this._givenBackAt = this._store.changes;
        }
        this._giveBackTries = 0;
      } else {
        this.cutWal();
      }
      this.diskLow = !this.keepReserve();
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
      let full = error;
      // Without new frames (deletes, stamps, seqs) the first part goes first too, the last only if need be.
      const rest = this._reserve.size() > DRAIN_RESERVE_BYTES ? DRAIN_RESERVE_BYTES : 0;
      if (this.releaseReserve(frames.length ? this._framesKeep : rest)) {
        this.cutWal(); // the WAL's pages into the file first: the retried commit starts a new WAL
        try {
          this._store.commit(frames, acked, stamps, seqs);
          this.cutWal();
          return;
        } catch (again) {
          if (!(again instanceof SpoolFull)) throw again;
          full = again;
        }
      }
      if (acked.length) {
        this.releaseReserve(0);
        this._deleteInSteps(acked);
      }
      if (frames.length > 0 || stamps.length > 0 || seqs.length > 0) throw full;
      return;
    }
    if (this.diskLow) this.cutWal(); // the WAL never holds more than one commit that the file has not taken
  }

  /** At a stop the frames already read may take the reserve's last part too: nothing reads after them. */
  stopping() {
    this._framesKeep = 0;
  }

  /** On a disk with no room left, deletes acknowledged frames a few pages at a time, cutting the WAL back after
   * each step: the one transaction deleting them all may need more WAL than the disk has, and would only grow while
   * it keeps failing. Stops at the first step that does not fit (deleting again is harmless). */
  _deleteInSteps(acked) {
    const { db } = this._store;
    this.cutWal(); // a WAL that filled the disk first gives its room back
    for (const [first, last] of acked) {
      for (let start = first; start <= last; start += DELETE_STEP_FRAMES) {
        try {
          this._store.deleteRange(start, Math.min(last, start + DELETE_STEP_FRAMES - 1));
        } catch (error) {
          onlySqliteErrors(error);
          if (db.inTransaction) db.exec('ROLLBACK');
          return;
        }
        this.cutWal();
      }
    }
  }

  /** Copies the WAL into the database and cuts it to nothing: the WAL of a spool that grew while Cassandra was
   * away can hold most of the disk. A checkpoint refused for lack of room (the file must grow to take the WAL's
   * newest pages) is given the reserve, its last part too; the cut WAL holds at least the room the file grew by, so
   * the last part is made again from it. False if readers (busy now: tried at the next room check) or the disk did
   * not let it. */
  cutWal() {
    let outcome = this._checkpointTruncate();
    if (outcome === 'no room') {
      for (const keep of [DRAIN_RESERVE_BYTES, 0]) {
        if (!this.releaseReserve(keep)) continue;
        outcome = this._checkpointTruncate();
        if (outcome !== 'no room') break;
      }
      if (outcome === 'done') this._reserve.keep(0, DRAIN_RESERVE_BYTES);
    }
    return outcome === 'done';
  }

  /** 'done', 'busy' (a reader) or 'no room' (the disk refused it). */
  _checkpointTruncate() {
    const { db } = this._store;
    try {
      db.pragma('busy_timeout = 0');
      const [{ busy }] = db.pragma('wal_checkpoint(TRUNCATE)');
      return busy === 0 ? 'done' : 'busy';
    } catch (error) {
      onlySqliteErrors(error);
      return isDiskError(error) ? 'no room' : 'busy';
    } finally {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /** A drained spool on a low disk gives its free pages back: the WAL cut, VACUUM (it rewrites the few pages in
   * use, through the WAL), the WAL cut again. Each step may fail for lack of room: false, and the next room check
   * tries again. */
  _giveBackFreePages() {
    if (!this.cutWal()) return false;
    try {
      this._store.db.exec('VACUUM');
    } catch (error) {
      onlySqliteErrors(error);
      return false;
    }
    return this.cutWal();
  }

  /** Copies the WAL into the database file without blocking commits or reads (PASSIVE): the pages of
   * transactions still being read stay for the next call. With synchronous=NORMAL this is the fsync of the
   * interval policy. Returns [pages in the WAL, pages checkpointed]. */
  checkpoint() {
    this.checkpointed = [this._store.changes, this._clock()];
    try {
      const [{ log, checkpointed }] = this._store.reader.pragma('wal_checkpoint(PASSIVE)');
      return [log, checkpointed];
    } catch (error) {
      if (isDiskError(error)) this.diskLow = true; // the WAL took the disk: the room checks cut it, with the reserve
      throw error;
    }
  }

  /** Rows changed and milliseconds gone since the last checkpoint: [changed, idleMs]. */
  sinceCheckpoint() {
    const [changesAt, at] = this.checkpointed;
    return [this._store.changes - changesAt, this._clock() - at];
  }
}
