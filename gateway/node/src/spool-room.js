// Room on the spool's disk (gateway/contract/spool.md, "Full disk"; the Python gateway's spool.py): the reserve file
// beside the spool, the disk's free bytes, and what a low disk gets back from the spool file itself (its WAL cut to
// nothing; a drained spool's free pages). The Spool (spool.js) decides when; this is how.
//
// The reserve is given up in two parts: when a commit of new frames finds the disk full, all but
// DRAIN_RESERVE_BYTES of it goes and the commit is retried, so what was read is kept; the rest goes only to delete
// acknowledged frames or to open the spool, so a spool on a disk that stays full still drains. Reading resumes once
// the reserve could be made again with ROOM_MARGIN_BYTES to spare (room for a while, not a flutter); the margin is
// waived once the spool file holds no frame: on a small disk a drained spool may never leave it.

import { closeSync, constants, fsyncSync, openSync, rmSync, statSync, statfsSync, truncateSync, unlinkSync,
  writeSync } from 'node:fs';
import { dirname } from 'node:path';

import Database from 'better-sqlite3';

export const RESERVE_BYTES = 1 << 20;
// The reserve's last part: WAL room for deleting acknowledged frames (in steps), never given to new frames.
export const DRAIN_RESERVE_BYTES = 256 << 10;
export const ROOM_MARGIN_BYTES = 1 << 20; // free beyond the reserve before reading resumes: not a flutter
export const DISK_FULL_BYTES = 1 << 20; // a refused commit with less than this free was refused by the disk
export const DELETE_STEP_FRAMES = 256; // acknowledged frames deleted per transaction on a full disk

/** SQLite's or the file system's word for a full disk (or a write it could not do). */
export function isDiskError(error) {
  const code = typeof error?.code === 'string' ? error.code : '';
  return code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR') || code === 'ENOSPC';
}

/** Rethrows anything but an error of SQLite (Python's sqlite3.Error): those are the caller's to swallow. */
export function onlySqliteErrors(error) {
  if (!(error instanceof Database.SqliteError)) throw error;
}

/** Bytes free for an unprivileged writer on the disk holding path. */
export function diskFree(path) {
  const stats = statfsSync(dirname(path));
  return stats.bavail * stats.bsize;
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

/** Copies the WAL into the database and cuts it to nothing (the writer db; readers busy now: false, tried at the
 * next room check): the WAL of a spool that grew while Cassandra was away can hold most of the disk. False if
 * readers or the disk did not let it. */
export function truncateWal(db, busyTimeoutMs) {
  try {
    db.pragma('busy_timeout = 0');
    const [{ busy }] = db.pragma('wal_checkpoint(TRUNCATE)');
    return busy === 0;
  } catch (error) {
    onlySqliteErrors(error);
    return false;
  } finally {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  }
}

/** A drained spool on a low disk gives its free pages back: the WAL cut, VACUUM (it rewrites the few pages in use,
 * through the WAL), the WAL cut again. Each step may fail for lack of room: false, and the caller tries again at its
 * next room check. */
export function giveBackFreePages(db, busyTimeoutMs) {
  if (!truncateWal(db, busyTimeoutMs)) return false;
  try {
    db.exec('VACUUM');
  } catch (error) {
    onlySqliteErrors(error);
    return false;
  }
  return truncateWal(db, busyTimeoutMs);
}

/** On a disk with no room left, deletes acknowledged frames (deleteRange: the writer's statement for an id range)
 * a few pages at a time, cutting the WAL back after each step: the one transaction deleting them all may need more
 * WAL than the disk has, and would only grow while it keeps failing. Stops at the first step that does not fit
 * (deleting again is harmless). Returns how many rows went. */
export function deleteInSteps(db, deleteRange, acked, busyTimeoutMs) {
  let deleted = 0;
  for (const [first, last] of acked) {
    for (let start = first; start <= last; start += DELETE_STEP_FRAMES) {
      try {
        deleted += deleteRange.run(start, Math.min(last, start + DELETE_STEP_FRAMES - 1)).changes;
      } catch (error) {
        onlySqliteErrors(error);
        if (db.inTransaction) db.exec('ROLLBACK');
        return deleted;
      }
      truncateWal(db, busyTimeoutMs);
    }
  }
  return deleted;
}
