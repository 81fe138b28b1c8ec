// The durable spool: every accepted frame is committed here before it is sent, and removed only after Cassandra
// acknowledged it (gateway/contract/spool.md; schema gateway/contract/spool.sql). This is the one class the rest of
// the gateway uses; the parts:
// - schema.js, upgrade-plan.js: the contract's spool.sql, opening a file, the steps an older format needs;
// - salvage.js, recovery.js: a damaged file found at open, what is still readable in it, its replacement;
// - store.js: the connections, the group commit, the rows read back for the sender;
// - room.js: the cap, the reserve for a full disk, the WAL's checkpoints;
// - policies.js: the durability policies (batch, interval, deferred) behind one interface, with held-frames.js,
//   receipt-ceilings.js and safe-seqs.js for deferred's bookkeeping.

import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

import { leaveCleanStop, takeCleanStop } from './clean-stop.js';
import { POLICIES } from './policies.js';
import { recoverIfDamaged } from './recovery.js';
import { Reserve, Room } from './room.js';
import { isDamage } from './salvage.js';
import { Store, SpoolFull, isDiskError, stampEntries } from './store.js';

export { BUSY_TIMEOUT_MS, FORMAT_VERSION, SpoolFormatError, WAL_KEEP_BYTES } from './schema.js';
export { DISK_FULL_BYTES, SpoolFull, newFrame, stampEntries } from './store.js';
export { CAP_HEADROOM, DELETE_STEP_FRAMES, DRAIN_RESERVE_BYTES, RESERVE_BYTES, ROOM_MARGIN_BYTES } from './room.js';

export class Spool {
  /** Opens (or creates) the spool at path with an fsync policy ("batch", "interval" or "deferred"); reading pauses
   * at maxBytes. Deferred: holdMs, how long a frame waits in memory for its acknowledgement (fsync_interval_ms);
   * maxHeld (held-frames.js, MAX_HELD); clock: monotonic ms (tests give their own). */
  constructor(path, { fsync = 'batch', maxBytes = 1 << 30, clock = () => performance.now(), ...options } = {}) {
    this.path = String(path);
    this.reservePath = `${this.path}.reserve`;
    const reserve = new Reserve(this.reservePath);
    mkdirSync(dirname(this.path), { recursive: true });
    /** SQLite deletes the WAL file when its last connection closes cleanly: one left over means a crash, unless the
     * last stop was clean and only its checkpoint found no room (clean-stop.js). */
    const clean = takeCleanStop(this.path);
    this.uncleanStop = existsSync(`${this.path}-wal`) && !clean;
    /** A damaged file is replaced by a new spool with what could be read from it (spool.md, "A damaged spool"):
     * what was found and done (recovery.js), or null. */
    this.recovered = recoverIfDamaged(this.path);
    const Policy = POLICIES[fsync];
    try {
      this._store = new Store(this.path, Policy.synchronous);
    } catch (error) {
      if (isDamage(error) && this.recovered === null) { // damage the quick check did not see
        this.recovered = recoverIfDamaged(this.path, { damage: error.message });
      } else if (!isDiskError(error) || !reserve.releaseForOpen()) {
        // Opening (the WAL index, a first write) needed room: the reserve's first part, or 64 KiB of its last.
        throw error;
      }
      this._store = new Store(this.path, Policy.synchronous);
    }
    this._room = new Room(this._store, reserve, maxBytes, clock);
    this._policy = new Policy(this._store, { ...options, clock });
    this._write = (frames, acked, stamps, seqs) => this._room.commit(frames, acked, stamps, seqs);
  }

  /** Frames not yet acknowledged: in the file and held in memory. */
  get depth() {
    return this._store.depth + this._policy.held;
  }

  /** Frames in the spool file (as of the last commit): what a crash keeps. */
  get fileFrames() {
    return this._store.depth;
  }

  /** Frames held in memory, not in the file (deferred). */
  get heldFrames() {
    return this._policy.held;
  }

  /** The disk had no room for the reserve (and its margin) at the last look: reading pauses. */
  get diskLow() {
    return this._room.diskLow;
  }

  /** Whether frames may be held in memory now (deferred, while that is safe). */
  get holding() {
    return this._policy.holding(this._store);
  }

  /** The sender's link to Cassandra changed (connected; its last write succeeded). Returns whether held frames
   * became due at once. */
  setLink(connected, writeOk) {
    return this._policy.setLink(this._store, connected, writeOk);
  }

  /** received_ms of the oldest frame in the file; null when it has none (held frames are younger than holdMs). */
  oldestReceivedMs() {
    return this._store.oldestReceivedMs();
  }

  /** Bytes of the pages in use: what the cap is measured in. */
  usedBytes() {
    return this._room.usedBytes();
  }

  /** The newest limit sources' last receipt stamps, a Map source → ms, newest first; older rows are pruned (a
   * forgotten source restarts above the newest stamp forgotten). */
  lastReceiptStamps(limit = 1000) {
    const stamps = new Map(this._store.newestRows('receipt_stamps', 'source, last_ts_ms', 'last_ts_ms', limit));
    this._policy.stampsLoaded(stamps, limit);
    return stamps;
  }

  /** Each source's last accepted counter of signed frames, as earlier runs left them: a Map source → counter. */
  lastCounters() {
    return new Map(this._store.db.prepare('SELECT source, counter FROM source_counters').raw().all());
  }

  /** The fingerprint of the key each stored counter belongs to ('': a row written before fingerprints). */
  lastCounterKeys() {
    return new Map(this._store.db.prepare('SELECT source, key_fingerprint FROM source_counters').raw().all());
  }

  /** The newest limit sources' last safe seqs as an earlier run stored them: a Map source → [seq, ts_ms], newest
   * first (by ts_ms); older rows are pruned as lastReceiptStamps() prunes. */
  lastSourceSeqs(limit = 1000) {
    return new Map(this._store.newestRows('source_seqs', 'source, seq, ts_ms', 'ts_ms', limit)
      .map(([source, seq, tsMs]) => [source, [seq, tsMs]]));
  }

  /** One transaction: delete acknowledged frames (inclusive [first, last] id ranges), append new ones (from
   * newFrame()), record the sources' last receipt stamps (Map or object source → ms) and the newest seq per
   * source among the new frames. On a full disk a part of the reserve is given up and the commit tried once more.
   * Throws SpoolFull when there is no room; then no new frame was written (acknowledged ones may have been
   * deleted, in steps: deleting them again is harmless). Deferred: while holding is safe new frames are held, and
   * what is due is committed. Returns how many frames went into the file. */
  commit(frames, acked, receiptStamps = null, counters = null) {
    // Signed frames' [counter, key fingerprint] accepted since the last call: stored by the next commit that succeeds.
    for (const [source, counted] of counters ?? []) this._store.countersPending.set(source, counted);
    return this._policy.commit(this._store, this._write, frames, acked, stampEntries(receiptStamps));
  }

  /** Commits what is held in memory, at a clean stop (deferred). Returns the frames written. */
  commitHeld() {
    return this._policy.commitHeld(this._store, this._write);
  }

  /** Milliseconds until a commit with nothing new is due; null: nothing waits. */
  flushDelayMs() {
    return this._policy.flushDelayMs(this._store);
  }

  /** null while reading may go on; "cap" when the spool holds maxBytes, "disk" while its disk has no room. */
  room() {
    return this._room.room();
  }

  /** At shutdown: frames already read go in past the cap rather than being lost. */
  liftCap() {
    this._room.liftCap();
  }

  /** The oldest frames with an id above afterId, held and committed together: [{id, source, ts_ms, received_ms,
   * metrics, vals (Buffer)}]. */
  take(afterId, limit) {
    return this._policy.take(this._store, afterId, limit);
  }

  /** The frame rows take() found failing their checksum since the last call (deleted from the file, not sent), as
   * read, for the sender to count and log (spool.md, "Row checksums"). */
  damagedRows() {
    const rows = this._store.damaged;
    this._store.damaged = [];
    return rows;
  }

  /** Deletes up to count of the oldest frames (the when_full = drop_oldest policy); returns how many. */
  dropOldest(count) {
    return this._store.dropOldest(count);
  }

  /** Copies the WAL into the database file (room.js). Returns [pages in the WAL, pages checkpointed]. */
  checkpoint() {
    return this._room.checkpoint();
  }

  /** Whether the service's periodic checkpoint() should run now (the policy says how often). */
  checkpointDue() {
    return this._policy.checkpointDue(...this._room.sinceCheckpoint());
  }

  /** Resolves once every commit so far is on the disk. */
  whenDurable() {
    return this._policy.whenDurable();
  }

  /** Call once whenDurable() has resolved (no fsync running). What is still held goes into the file first, past
   * the cap if need be (the ingest's stop normally did it, with retries while there was no room). Returns how many
   * held frames could not be committed: lost. */
  close() {
    try {
      if (this._policy.held) {
        this.liftCap();
        this.stopping();
      }
      this.commitHeld();
    } catch (error) {
      if (!(error instanceof SpoolFull)) throw error;
    } finally {
      this._policy.close();
      this._room.cutWal(); // with the reserve's room on a full disk: a stop leaves no WAL behind
      this._store.close();
    }
    leaveCleanStop(this.path);
    return this._policy.held;
  }

  /** At a stop: frames already read may take the last part of the disk's reserve (spool.md, "Full disk"). */
  stopping() {
    this._room.stopping();
  }
}
