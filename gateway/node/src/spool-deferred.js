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
// Frames are held only while holding is safe (vectors/hold.jsonl): the sender is connected, its last write
// succeeded (setLink()) and the spool file holds no frame as of the last commit. Otherwise every held frame is due
// at once and new frames are committed as they come, as with "batch": while Cassandra is away or failing the file
// is the only copy. Each source's last safe seq goes into source_seqs once no held frame precedes it (safe-seqs.js),
// at most every ROWS_INTERVAL_MS: with the first commit made anyway after it, or by one of its own.
//
// The few commits made are synchronous=FULL (fsynced inside the commit, on the event loop): a ceiling is then on
// the disk before the frames it covers count as spooled, with no WAL fsync to await (wal-sync.js is batch's).

import { HeldFrames, MAX_HELD, mergeById } from './held-frames.js';
import { ReceiptCeilings } from './receipt-ceilings.js';
import { ROWS_INTERVAL_MS, SafeSeqs, newestSeqs } from './safe-seqs.js';
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
   * default the contract's); maxHeld: see MAX_HELD; clock: monotonic ms (tests give their own). */
  constructor(path, { holdMs = 1000, maxHeld = MAX_HELD, clock = () => performance.now(), ...options } = {}) {
    super(path, { ...options, fsync: 'deferred' });
    this._clock = clock;
    this._held = new HeldFrames(holdMs, maxHeld);
    // The sender's link: not connected at open, so the first frames are committed (setLink()).
    this._connected = false;
    this._writeOk = true;
    this._safeSeqs = new SafeSeqs();
    this._seqsWrittenAt = clock(); // when source_seqs rows were last written
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

  /** Holding is safe: connected, the last write succeeded, and no frame in the file as of the last commit. */
  get holding() {
    return this._connected && this._writeOk && this._diskDepth === 0;
  }

  setLink(connected, writeOk) {
    this._connected = connected;
    this._writeOk = writeOk;
    return this._held.size > 0 && !this.holding;
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

  /** Milliseconds until a commit with nothing new is due: held frames (at once while holding is not safe), or
   * writable seq rows waiting; null: nothing waits. */
  flushDelayMs() {
    if (this._held.size && !this.holding) return 0;
    const now = this._clock();
    const at = this._held.dueAt();
    const delays = [at === null ? null : at - now, this._safeSeqs.dueInMs(this._seqsWrittenAt, now)]
      .filter((delay) => delay !== null);
    return delays.length ? Math.max(0, Math.min(...delays)) : null;
  }

  _commitDeferred(frames, acked, stamps, final) {
    const now = this._clock();
    const deletes = acked.filter(([first, last]) => this._held.acknowledge(first, last));
    // Judged with the file as of the last commit, or of this one when its deletes empty it with nothing held:
    // acknowledgements ride with the next read's frames, so otherwise holding would never resume at a steady input.
    const holding = !final && (this.holding || (this._connected && this._writeOk && this._held.size === 0
      && this._emptiedBy(deletes)));
    const due = this._held.due(now, !holding);
    const fresh = frames.map((frame, i) => heldFrame(this._nextId + i, frame));
    const committing = holding || fresh.length === 0 ? due : [...due, ...fresh];
    const group = fresh.length ? [fresh.at(-1).id, newestSeqs(frames)] : null;
    // The lowest id still held once this commit is done: the due frames are the oldest held.
    const lowestHeld = this._held.lowestId(due.length) ?? (holding && fresh.length ? fresh[0].id : null);
    const seqs = this._safeSeqs.rowsIf(lowestHeld, group);
    const seqsDue = seqs.length > 0 && (final || now - this._seqsWrittenAt >= ROWS_INTERVAL_MS);
    const rows = final ? this._ceilings.finalRows() : this._ceilings.rowsFor(stamps);
    const commit = committing.length || deletes.length || rows.length || seqsDue;
    if (commit) this._commitWithRoom(committing, deletes, rows, seqsDue ? seqs : []);
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

  /** Whether deleting these acknowledged inclusive id ranges leaves no frame in the file. */
  _emptiedBy(ranges) {
    if (!ranges.length || ranges.reduce((n, [first, last]) => n + last - first + 1, 0) < this._diskDepth) {
      return false; // cheap: the ranges cannot hold every frame (a backlog being drained)
    }
    const merged = []; // a range acknowledged twice must not count its frames twice
    for (const [first, last] of [...ranges].sort((a, b) => a[0] - b[0])) {
      if (merged.length && first <= merged.at(-1)[1] + 1) merged.at(-1)[1] = Math.max(merged.at(-1)[1], last);
      else merged.push([first, last]);
    }
    const count = this._db.prepare('SELECT count(*) FROM frames WHERE id BETWEEN ? AND ?').pluck();
    return merged.reduce((n, [first, last]) => n + count.get(first, last), 0) >= this._diskDepth;
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

  /** A close: what is still held goes into the file first, past the cap if need be (the ingest's stop normally
   * did it, with retries while there was no room). Returns how many held frames could not be committed: lost. */
  close() {
    try {
      if (this._held.size) this.liftCap();
      this.commitHeld();
    } catch (error) {
      if (!(error instanceof SpoolFull)) throw error;
    } finally {
      super.close();
    }
    return this._held.size;
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
