// The durability policies ([spool] fsync; gateway/contract/spool.md, "Durability"), behind one interface the spool
// calls: what a commit writes, what take() returns, when an idle loop must commit, when to checkpoint, when a
// commit is on the disk.
//
// - batch: every frame committed as it comes, with synchronous=NORMAL plus an fsync of the WAL after each commit
//   in libuv's thread pool (WalSync), so the event loop goes on reading and sending; a commit's frames count as
//   spooled only once whenDurable() resolves: synchronous=FULL's promise.
// - interval: as batch without the fsync: commits reach the OS at once (a killed process loses nothing committed)
//   and are fsynced by the checkpoint the service runs every fsync_interval_ms (SQLite syncs the WAL before it
//   copies it).
// - deferred (the default): write-behind, so that a healthy link writes (almost) nothing to the disk (an SD card
//   wears out). While holding is safe (vectors/hold.jsonl: the sender connected, its last write succeeded, no frame
//   in the file as of the last commit) an accepted frame gets its id at once and is held in memory (held-frames.js);
//   only those Cassandra has not acknowledged within holdMs (fsync_interval_ms), or the oldest past MAX_HELD, are
//   committed, with their ids, by an ordinary commit (the reserve, SpoolFull and the ingest's retries as for any
//   other). Otherwise every held frame is due at once and new frames are committed as they come: while Cassandra is
//   away or failing the file is the only copy. Receipt stamps are stored as ceilings (receipt-ceilings.js); each
//   source's last safe seq once no held frame precedes it (safe-seqs.js), riding with those commits (at most every
//   ROWS_INTERVAL_MS) or, ROWS_ALONE_MS after the last write, by one of their own. Its few
//   commits are synchronous=FULL (fsynced inside the commit): a ceiling is on the disk before the frames it covers
//   count as spooled.
//
// A policy gets `write(frames, acked, stamps, seqs)`, the room's commit, and the store for what the file holds.

import { closeSync, fsync, openSync } from 'node:fs';

import { contractNumber } from '../contract-constants.js';
import { HeldFrames, MAX_HELD, mergeById } from './held-frames.js';
import { ReceiptCeilings } from './receipt-ceilings.js';
import { ROWS_ALONE_MS, ROWS_INTERVAL_MS, SafeSeqs, newestSeqs } from './safe-seqs.js';

// Deferred: the WAL of a healthy link holds only a few small commits (stamp ceilings and seqs, one a minute): each
// checkpoint writes their pages a second time, into the database file, and fsyncs both files. It is copied once
// this many rows changed, or once ten minutes passed with any change (the WAL then holds ~100 KiB).
const CHECKPOINT_ROWS = contractNumber('checkpoint_rows');
export const CHECKPOINT_IDLE_MS = contractNumber('checkpoint_idle_ms');

/** The WAL file fsynced off the event loop: whenDurable() resolves once an fsync started after the call is done. */
class WalSync {
  /** walPath: the spool's `-wal` file (fsync works on the file, whichever descriptor wrote it). */
  constructor(walPath) {
    this.walPath = walPath;
    this.fd = null;
    this.running = false;
    this.waiting = []; // {resolve, reject} of calls made since the running fsync started
  }

  whenDurable() {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.running) this.start();
    });
  }

  start() {
    const callers = this.waiting;
    this.waiting = [];
    try {
      this.fd ??= openSync(this.walPath, 'r');
    } catch (error) {
      for (const caller of callers) caller.reject(error);
      return;
    }
    this.running = true;
    fsync(this.fd, (error) => {
      this.running = false;
      for (const caller of callers) {
        if (error) caller.reject(error);
        else caller.resolve();
      }
      if (this.waiting.length) this.start();
    });
  }

  /** Call once no fsync is running (after whenDurable() resolved): the spool deletes the WAL when it closes. */
  close() {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/** Every frame committed as it comes: what batch and interval share. */
class Immediate {
  static synchronous = 'NORMAL';

  /** Frames held in memory, not in the file. */
  get held() {
    return 0;
  }

  /** Whether frames may be held in memory now. */
  holding() {
    return false;
  }

  /** The sender's link changed (connected; its last write succeeded); returns whether held frames became due. */
  setLink() {
    return false;
  }

  /** The receipt stamps an earlier run stored (a Map, newest first), read at start. */
  stampsLoaded() {}

  /** Commits frames, acked id ranges and stamps ([source, ms] pairs) through write; returns frames written. */
  commit(store, write, frames, acked, stamps) {
    write(frames, acked, stamps, [...newestSeqs(frames)]);
    return frames.length;
  }

  /** At a clean stop: what is held goes into the file. Returns the frames written. */
  commitHeld() {
    return 0;
  }

  take(store, afterId, limit) {
    return store.take(afterId, limit);
  }

  /** Milliseconds until a commit with nothing new is due; null: nothing waits. */
  flushDelayMs() {
    return null;
  }

  /** Whether the periodic checkpoint should run, given rows changed and ms gone since the last one. */
  checkpointDue() {
    return true;
  }

  /** Resolves once every commit so far is on the disk. */
  whenDurable() {
    return Promise.resolve();
  }

  /** Call once whenDurable() has resolved (no fsync running). */
  close() {}
}

/** The commit is not fsynced: the periodic checkpoint is. */
class Interval extends Immediate {}

/** Each commit durable once the WAL's fsync after it is done (WalSync): its frames count as spooled then. */
class Batch extends Immediate {
  /** store: the spool's Store (its path names the WAL). */
  constructor(store) {
    super();
    this._walSync = new WalSync(`${store.path}-wal`);
  }

  whenDurable() {
    return this._walSync.whenDurable();
  }

  close() {
    this._walSync.close();
  }
}

/** A new frame (newFrame()) under its id, shaped as take() returns a committed row. */
function heldFrame(id, frame) {
  return { id, source: frame.source, ts_ms: frame.ts_ms, received_ms: frame.received_ms, metrics: frame.metrics,
    vals: frame.vals };
}

export class Deferred {
  static synchronous = 'FULL';

  /** holdMs: how long a frame waits in memory for its acknowledgement; maxHeld: see MAX_HELD; clock: monotonic ms;
   * wallClock: the wall clock in ms, which receipt stamps come from (tests give their own). */
  constructor(store, { holdMs = 1000, maxHeld = MAX_HELD, clock, wallClock = Date.now } = {}) {
    this._clock = clock;
    this._wallClock = wallClock;
    this._held = new HeldFrames(holdMs, maxHeld);
    // The sender's link: not connected at open, so the first frames are committed (setLink()).
    this._connected = false;
    this._writeOk = true;
    this._safeSeqs = new SafeSeqs(store.db.prepare('SELECT source FROM source_seqs').pluck().all());
    this._seqsWrittenAt = clock(); // when source_seqs rows were last written
    this._committedMaxId = store.maxId;
    this._nextId = store.nextId; // held frames take ids above every id the file has given, as AUTOINCREMENT would
    this._ceilings = new ReceiptCeilings(store.db.prepare('SELECT source, last_ts_ms FROM receipt_stamps').raw().all(),
      1000);
  }

  get held() {
    return this._held.size;
  }

  /** Holding is safe: connected, the last write succeeded, and no frame in the file as of the last commit. */
  holding(store) {
    return this._connected && this._writeOk && store.depth === 0;
  }

  setLink(store, connected, writeOk) {
    this._connected = connected;
    this._writeOk = writeOk;
    return this._held.size > 0 && !this.holding(store);
  }

  stampsLoaded(stamps, limit) {
    this._ceilings = new ReceiptCeilings(stamps, limit);
  }

  /** Holds the new frames and commits what is due: held frames, deletes of committed ones acknowledged, ceilings. */
  commit(store, write, frames, acked, stamps, final = false) {
    const now = this._clock();
    const deletes = acked.filter(([first, last]) => this._held.acknowledge(first, last));
    // Judged with the file as of the last commit, or of this one when its deletes empty it with nothing held:
    // acknowledgements ride with the next read's frames, so otherwise holding would never resume at a steady input.
    const holding = !final && (this.holding(store) || (this._connected && this._writeOk && this._held.size === 0
      && store.emptiedBy(deletes)));
    const due = this._held.due(now, !holding);
    const fresh = frames.map((frame, i) => heldFrame(this._nextId + i, frame));
    const committing = holding || fresh.length === 0 ? due : [...due, ...fresh];
    const group = fresh.length ? [fresh.at(-1).id, newestSeqs(frames)] : null;
    // The lowest id still held once this commit is done: the due frames are the oldest held.
    const lowestHeld = this._held.lowestId(due.length) ?? (holding && fresh.length ? fresh[0].id : null);
    const seqs = this._safeSeqs.rowsIf(lowestHeld, group);
    // A source without a stored row has its row written at once (safe-seqs.js): as if the interval were up.
    const seqsAge = this._safeSeqs.anyNew(seqs) ? Infinity : now - this._seqsWrittenAt;
    // The periodic rows (stamp ceilings, seqs) go together: a commit made for one takes the other along when it is
    // near its time, so a healthy link makes one small commit a minute, not one for each.
    const along = committing.length > 0 || deletes.length > 0 || store.countersPending.size > 0
      || (seqs.length > 0 && seqsAge >= ROWS_ALONE_MS);
    const rows = final ? this._ceilings.finalRows() : this._ceilings.rowsFor(stamps, this._wallClock(), along);
    const anyway = along || rows.length > 0;
    const seqsDue = seqs.length > 0 && (final || seqsAge >= (anyway ? ROWS_INTERVAL_MS : ROWS_ALONE_MS));
    if (anyway || seqsDue) {
      write(committing, deletes, rows, seqsDue ? seqs : []);
    }
    if (group !== null) this._safeSeqs.accepted(...group);
    this._safeSeqs.release(lowestHeld);
    if (seqsDue) {
      this._seqsWrittenAt = now;
      this._safeSeqs.written();
    }
    this._nextId += fresh.length;
    if (committing.length) {
      this._committedMaxId = Math.max(this._committedMaxId, committing.at(-1).id);
      this._held.committed(due); // only now: until the commit is done they are nowhere else
    }
    if (holding) this._held.hold(fresh, now);
    this._ceilings.committed(stamps, rows);
    return committing.length;
  }

  /** At a clean stop: every held frame, and every source's receipt stamp at its real value (not a ceiling). */
  commitHeld(store, write) {
    return this.commit(store, write, [], [], [], true);
  }

  take(store, afterId, limit) {
    const held = this._held.take(afterId, limit); // first: a frame committed meanwhile then shows in both
    if (this._committedMaxId <= afterId) return held; // no committed row above afterId: no query
    const committed = store.take(afterId, limit);
    return held.length ? mergeById(held, committed, limit) : committed;
  }

  /** Held frames (at once while holding is not safe), or writable seq rows waiting. */
  flushDelayMs(store) {
    if (this._held.size && !this.holding(store)) return 0;
    const now = this._clock();
    const at = this._held.dueAt();
    const delays = [at === null ? null : at - now, this._safeSeqs.dueInMs(this._seqsWrittenAt, now)]
      .filter((delay) => delay !== null);
    return delays.length ? Math.max(0, Math.min(...delays)) : null;
  }

  checkpointDue(changed, idleMs) {
    return changed >= CHECKPOINT_ROWS || (changed > 0 && idleMs >= CHECKPOINT_IDLE_MS);
  }

  /** Its commits are fsynced inside the commit. */
  whenDurable() {
    return Promise.resolve();
  }

  close() {}
}

export const POLICIES = { batch: Batch, interval: Interval, deferred: Deferred };
