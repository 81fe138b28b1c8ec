// The deferred fsync policy, the default (gateway/contract/spool.md, "`deferred` in detail"; the Python gateway's
// spool.py with held_frames.py and receipt_ceilings.py): write-behind, so that a healthy link writes (almost)
// nothing to the disk (an SD card wears out; "batch" writes ~25 KB per frame).
//
// An accepted frame gets its id at once and is held in memory (held-frames.js); it counts as spooled at once, and
// take() returns held frames and committed rows together. Only the frames Cassandra has not acknowledged within
// holdMs (fsync_interval_ms), or the oldest past MAX_HELD, are committed, with their ids, by an ordinary commit
// (the reserve, SpoolFull and the ingest's retries as for any other); they leave memory once it is done. Receipt
// stamps are stored as ceilings (receipt-ceilings.js). A commit that would change nothing is not made.
//
// The few commits made are synchronous=FULL (fsynced inside the commit, on the event loop): a ceiling is then on
// the disk before the frames it covers count as spooled, with no WAL fsync to await (wal-sync.js is batch's).

import { HeldFrames, mergeById } from './held-frames.js';
import { ReceiptCeilings } from './receipt-ceilings.js';
import { Spool, SpoolFull, stampEntries } from './spool.js';

// The WAL of a healthy link holds only a few small commits (receipt-stamp ceilings): copying them into the
// database every second would double what reaches the SD card. It is copied once this many rows changed, or once
// a minute.
export const CHECKPOINT_ROWS = 256;
export const CHECKPOINT_IDLE_MS = 60_000;

/** A new frame (newFrame()) under its id, shaped as take() returns a committed row. */
function heldFrame(id, frame) {
  return { id, source: frame.source, ts_ms: frame.ts_ms, received_ms: frame.received_ms, metrics: frame.metrics,
    vals: frame.vals };
}

export class DeferredSpool extends Spool {
  /** Spool's options, and holdMs: how long a frame waits in memory for its acknowledgement (fsync_interval_ms, by
   * default the contract's); clock: monotonic ms (tests give their own). */
  constructor(path, { holdMs = 1000, clock = () => performance.now(), ...options } = {}) {
    super(path, { ...options, fsync: 'deferred' });
    this._clock = clock;
    this._held = new HeldFrames(holdMs);
    // Held frames take ids above every id the spool has given, as AUTOINCREMENT would.
    this._committedMaxId = this._db.prepare('SELECT coalesce(max(id), 0) FROM frames').pluck().get();
    const sequence = this._db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'frames'").pluck().get();
    this._nextId = Math.max(this._committedMaxId, sequence ?? 0) + 1;
    this._ceilings = new ReceiptCeilings(this._db.prepare('SELECT source, last_ts_ms FROM receipt_stamps').raw().all(),
      1000);
    this._checkpointed = [this._changes, clock()]; // rows changed and the time at the last checkpoint
  }

  /** Frames not yet acknowledged: in the file and held in memory. */
  get depth() {
    return super.depth + this._held.size;
  }

  get heldFrames() {
    return this._held.size;
  }

  lastReceiptStamps(limit = 1000) {
    const stamps = super.lastReceiptStamps(limit);
    this._ceilings = new ReceiptCeilings(stamps, limit);
    return stamps;
  }

  /** Holds the new frames and commits what is due: held frames, deletes of committed ones acknowledged, ceilings. */
  commit(frames, acked, receiptStamps = null) {
    return this._commitDeferred(frames, acked, stampEntries(receiptStamps), false);
  }

  /** At a clean stop: every held frame, and every source's receipt stamp at its real value (not a ceiling). */
  commitHeld() {
    return this._commitDeferred([], [], [], true);
  }

  flushDelayMs() {
    const at = this._held.dueAt();
    return at === null ? null : Math.max(0, at - this._clock());
  }

  _commitDeferred(frames, acked, stamps, final) {
    const now = this._clock();
    const deletes = acked.filter(([first, last]) => this._held.acknowledge(first, last));
    const due = this._held.due(now, final);
    const rows = final ? this._ceilings.finalRows() : this._ceilings.rowsFor(stamps);
    if (due.length || deletes.length || rows.length) this._commitWithRoom(due, deletes, rows);
    if (due.length) {
      this._committedMaxId = Math.max(this._committedMaxId, due.at(-1).id);
      this._held.committed(due); // only now: until the commit is done they are nowhere else
    }
    this._held.hold(frames.map((frame, i) => heldFrame(this._nextId + i, frame)), now);
    this._nextId += frames.length;
    this._ceilings.committed(stamps, rows);
    return due.length;
  }

  checkpoint() {
    this._checkpointed = [this._changes, this._clock()];
    return super.checkpoint();
  }

  checkpointDue() {
    const [changesAt, at] = this._checkpointed;
    const changed = this._changes - changesAt;
    return changed >= CHECKPOINT_ROWS || (changed > 0 && this._clock() - at >= CHECKPOINT_IDLE_MS);
  }

  /** A clean close: what is still held goes into the file first (the ingest's stop normally did it, with retries
   * while there was no room; it also said what was lost). */
  close() {
    try {
      this.commitHeld();
    } catch (error) {
      if (!(error instanceof SpoolFull)) throw error;
    } finally {
      super.close();
    }
  }

  take(afterId, limit) {
    const held = this._held.take(afterId, limit); // first: a frame committed meanwhile then shows in both
    if (this._committedMaxId <= afterId) return held; // no committed row above afterId: no query
    const committed = super.take(afterId, limit);
    return held.length ? mergeById(held, committed, limit) : committed;
  }
}

/** The spool of an fsync policy: "deferred" a DeferredSpool, "batch" and "interval" a Spool. */
export function createSpool(path, { fsync = 'batch', ...options } = {}) {
  return fsync === 'deferred' ? new DeferredSpool(path, options) : new Spool(path, { ...options, fsync });
}
