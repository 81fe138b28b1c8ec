// The ingest stage: decoded frames → duplicate check, timestamp → spool, committed in groups (the Python
// gateway's ingest.py; gateway/contract/spool.md).
//
// Readers hand each read's frames over with the credits the read was made under (line-handler.js); a credit goes
// back once those frames are committed, so what a crash can lose is bounded to a few reads. While the spool has no
// room (its cap with when_full = pause, or a full disk) the credits of committed reads are held back: the readers
// pause and the bytes wait in the kernel, not in memory. Frames already read are always committed: past the cap
// into the spool's headroom, on a full disk into the room the spool's reserve file gives up (spool.js).
//
// Everything runs on the event loop: a step commits what arrived since the last one. Reads that arrive while a
// commit's fsync blocks the loop are grouped into the next commit, which is the group commit. With fsync = deferred
// the spool holds new frames in memory and commits those not acknowledged in time: a timer wakes a step when the
// oldest is due (none while nothing is held), and a stop commits what is still held.

import { RateLimitedLog, event } from './logs.js';
import { NEXT, SeqTracker } from './seq-tracker.js';
import { packValues } from './reading-values.js';
import { DAY_MS, Stamper } from './timestamps.js';

export const GROUP_MAX = 5000; // frames per commit at most: bounds one transaction's time and memory
const ROOM_CHECK_MS = 250; // while reading is paused, how often the spool is asked whether there is room again
const RETRY_MS = 500; // after a commit found no room at all
const STOP_GRACE_MS = 10_000; // at shutdown, how long a commit that finds no room is retried

export class Ingest {
  constructor(config, spool, metrics, onSpooled) {
    this.queue = []; // {frames, receivedMs, credits}: bounded by the readers' credits
    this.spool = spool;
    this.metrics = metrics;
    this.onSpooled = onSpooled;
    this.seq = new SeqTracker(Math.trunc(config.decode.duplicate_window_s * 1000));
    this.maxSources = config.decode.max_sources;
    this.stamper = new Stamper(Math.trunc(config.time.max_future_s * 1000),
      Math.trunc(config.time.max_age_days * DAY_MS), spool.lastReceiptStamps(this.maxSources), this.maxSources);
    // The sources whose state is kept, least recently seen first (a Map keeps insertion order).
    this.recent = new Map(this.stamper.sources().map((source) => [source, true]));
    metrics.sources_tracked.set(this.recent.size);
    this.dropOldest = config.spool.when_full === 'drop_oldest';
    this.groupLimit = GROUP_MAX; // halved while commits find no room, so a group fits what room is left
    this.acked = []; // [firstId, lastId] ranges acknowledged by the sender
    this.log = new RateLimitedLog();
    this.paused = null; // "cap" or "disk" while reading is paused
    this.pending = [];
    this.pendingCredits = []; // of the reads in pending: back once pending is committed
    this.withheld = []; // of committed reads, while the spool has no room
    this.stamps = {};
    this.nextRoomCheck = 0;
    this.timer = null;
    this.immediate = null;
    this.flushTimer = null; // deferred: for the oldest held frame, due at flushAt
    this.flushAt = 0;
    this.stopDeadline = null;
    this.stopped = null; // resolves once a stop has committed everything handed over
    this.syncing = 0; // fsyncs awaited before credits go back
  }

  /** One read's frames, from a reader: {frames, receivedMs, credits}. */
  put(received) {
    this.queue.push(received);
    this.schedule();
  }

  /** From the sender: frames with ids in [first, last] are in Cassandra and may leave the spool. */
  acknowledge(range) {
    this.acked.push(range);
    this.schedule();
  }

  /** Commits what was handed over (retrying a full spool for a bounded time); resolves when done. */
  stop() {
    if (!this.stopped) {
      this.stopDeadline = performance.now() + STOP_GRACE_MS;
      this.stopped = new Promise((resolve) => { this.resolveStopped = resolve; });
      this.schedule();
    }
    return this.stopped;
  }

  get idle() {
    return this.queue.length === 0 && this.pending.length === 0;
  }

  schedule(delayMs = 0) {
    if (delayMs === 0) {
      if (this.immediate === null) this.immediate = setImmediate(() => { this.immediate = null; this.step(); });
    } else if (this.timer === null && this.immediate === null) {
      this.timer = setTimeout(() => { this.timer = null; this.step(); }, delayMs);
    }
  }

  step() {
    const now = performance.now();
    const stopping = this.stopped !== null;
    if (this.pending.length === 0) {
      const [frames, credits] = this.collect();
      this.pending = frames;
      this.pendingCredits.push(...credits);
      this.stamps = this.stamper.takeChanged();
    }
    const acked = this.acked;
    this.acked = [];
    if (this.pending.length || acked.length || this.spool.flushDelayMs() === 0) {
      const group = this.pending.length > this.groupLimit ? this.pending.slice(0, this.groupLimit) : this.pending;
      if (this.commit(group, acked, this.stamps, stopping)) {
        this.pending = group === this.pending ? [] : this.pending.slice(group.length);
        this.stamps = {};
        this.groupLimit = Math.min(GROUP_MAX, this.groupLimit * 2);
      } else {
        this.groupLimit = Math.max(1, Math.floor(group.length / 2));
        this.acked.unshift(...acked);
        if (stopping && now > this.stopDeadline) {
          this.abandonStop();
          return;
        }
        this.schedule(RETRY_MS);
        return;
      }
    }
    if (this.pendingCredits.length && this.pending.length === 0) {
      this.returnWhenDurable(this.pendingCredits);
      this.pendingCredits = [];
    }
    if (this.withheld.length && now >= this.nextRoomCheck) {
      this.nextRoomCheck = now + ROOM_CHECK_MS;
      if (this.hasRoom()) {
        for (const credits of this.withheld) credits.release();
        this.withheld = [];
      }
    }
    if (this.pending.length || this.queue.length || this.acked.length) {
      this.schedule();
    } else if (stopping && this.syncing === 0) {
      this.commitHeldAndStop(now);
      return;
    } else if (this.withheld.length) {
      this.schedule(ROOM_CHECK_MS);
    }
    this.armFlush();
  }

  /** Deferred: held frames are committed once due even when nothing else happens; one timer, for the oldest. */
  armFlush() {
    const delay = this.spool.flushDelayMs();
    if (delay === null) { // nothing held: no wake-up
      this.clearFlush();
      return;
    }
    const at = performance.now() + delay;
    if (this.flushTimer !== null && this.flushAt <= at) return; // set for then or earlier
    this.clearFlush();
    this.flushAt = at;
    // Rounded up: a timer that fires a fraction of a ms early would find nothing due and arm another.
    this.flushTimer = setTimeout(() => { this.flushTimer = null; this.schedule(); }, Math.ceil(delay));
  }

  clearFlush() {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
  }

  /** At a stop, once everything handed over is committed: what is still held in memory goes into the file, with
   * the receipt stamps at their real values (deferred; nothing to do with the other policies). */
  commitHeldAndStop(now) {
    if (this.commit([], [], null, true, true)) this.finishStop();
    else if (now > this.stopDeadline) this.abandonStop();
    else this.schedule(RETRY_MS);
  }

  /** The stop's grace is over and the spool still has no room: what was not committed is lost. */
  abandonStop() {
    event('error', 'shutdown_with_unspooled_frames', {
      frames: this.pending.length + this.spool.heldFrames, reason: 'no room in the spool or on its disk',
      note: 'these frames are lost',
    });
    this.pending = [];
    this.finishStop();
  }

  /** The credits of committed reads go back (through the room check) once their frames are on the disk. */
  returnWhenDurable(credits) {
    this.syncing += 1;
    this.spool.whenDurable().then(() => {
      this.syncing -= 1;
      this.withheld.push(...credits);
      this.nextRoomCheck = 0;
      this.schedule();
    }, (error) => { // the disk failed the fsync: reading stays paused for these reads; tried again
      this.syncing -= 1;
      this.log.event('error', 'spool_sync_failed', { error: String(error.message).slice(0, 160),
        action: 'retrying; reading waits' });
      setTimeout(() => this.returnWhenDurable(credits), RETRY_MS);
    });
  }

  finishStop() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.clearFlush();
    this.resolveStopped();
  }

  collect() {
    const accepted = [];
    const credits = [];
    const formats = new Map();
    let frames = 0;
    while (this.queue.length && frames < GROUP_MAX) {
      const read = this.queue.shift();
      credits.push(read.credits);
      frames += read.frames.length;
      for (const frame of read.frames) {
        const row = this.accept(frame, read.receivedMs);
        if (row !== null) {
          accepted.push(row);
          formats.set(frame.format, (formats.get(frame.format) ?? 0) + 1);
        }
      }
    }
    for (const [format, count] of formats) this.metrics.frames_accepted.inc({ format }, count); // once per group
    return [accepted, credits];
  }

  accept(frame, receivedMs) {
    const { source } = frame;
    if (this.recent.has(source)) {
      this.recent.delete(source);
      this.recent.set(source, true);
    } else {
      this.newSource(source);
    }
    const packed = packValues(frame.values);
    if (frame.seq !== null) {
      // A retransmission repeats t, metrics and values; a conflict differs in one of them.
      const content = `${frame.t}|${packed.metrics}|${packed.vals.toString('latin1')}`;
      const verdict = this.seq.observe(source, frame.seq, receivedMs, content);
      if (verdict !== NEXT && !this.judged(frame, verdict)) return null;
    }
    const stamp = this.stamper.stamp(source, frame.t, receivedMs);
    if (stamp.explicit_t_refused) {
      this.metrics.time_refused.inc({ source });
      this.log.event('warning', 'explicit_time_refused', {
        key: source, source, t: frame.t, action: "stamped with the time of receipt; check the board's clock",
      });
    }
    return { source, ts_ms: stamp.ts_ms, received_ms: receivedMs, metrics: packed.metrics, vals: packed.vals };
  }

  /** Counts a verdict other than NEXT; false for a duplicate (dropped). */
  judged(frame, verdict) {
    const { source } = frame;
    if (verdict.duplicate) {
      this.metrics.duplicates.inc({ source });
      return false;
    }
    if (verdict.conflict) {
      this.metrics.seq_conflicts.inc({ source });
      this.log.event('warning', 'seq_conflict', {
        key: source, source, seq: frame.seq,
        action: 'stored: a recent frame had this seq with other values (two boards with one name?)',
      });
    }
    if (verdict.missing) {
      this.metrics.seq_missing.inc({ source }, verdict.missing);
      this.log.event('info', 'seq_gap', { key: source, source, missing: verdict.missing, seq: frame.seq });
    }
    if (verdict.restarted) {
      this.metrics.board_restarts.inc({ source });
      this.log.event('info', 'board_restarted', { key: source, source });
    }
    return true;
  }

  /** A source not among the last max_sources seen: past the bound the least recently seen one is forgotten
   * everywhere (its seqs, its receipt stamp, its metric labels), so junk with ever new names cannot grow memory. */
  newSource(source) {
    this.recent.set(source, true);
    if (this.recent.size > this.maxSources) {
      const old = this.recent.keys().next().value;
      this.recent.delete(old);
      this.seq.forget(old);
      this.stamper.forget(old);
      const m = this.metrics;
      for (const counter of [m.duplicates, m.seq_missing, m.board_restarts, m.seq_conflicts, m.time_refused]) {
        counter.remove({ source: old });
      }
      m.sources_evicted.inc();
      this.log.event('warning', 'source_evicted', {
        source: old, tracked: this.recent.size,
        action: 'forgot its seqs and metric labels; raise [decode] max_sources if it is real',
      });
    } else {
      this.metrics.sources_tracked.set(this.recent.size);
    }
  }

  /** final: the stop's commit of what the spool holds in memory (frames, acked and stamps are empty). */
  commit(frames, acked, stamps, stopping, final = false) {
    let written;
    try {
      written = final ? this.spool.commitHeld() : this.spool.commit(frames, acked, stamps);
    } catch (error) {
      if (error?.name !== 'SpoolFull') throw error;
      const kind = error.capReached ? 'cap' : 'disk';
      if (stopping && error.capReached) this.spool.liftCap(); // kept past the cap rather than lost at exit
      this.pause(kind, { waiting: final ? this.spool.heldFrames : frames.length, detail: error.message });
      return false;
    }
    if (written) this.metrics.spool_frames_committed.inc(written);
    this.metrics.spool_frames.set(this.spool.depth);
    if (frames.length) this.onSpooled();
    return true;
  }

  /** Whether reading may go on; pauses it (with a metric and a log line) when the spool has no room. */
  hasRoom() {
    const room = this.spool.room();
    if (room === null) {
      if (this.paused !== null) {
        event('info', 'spool_room_again', { kind: this.paused, spooled_frames: this.spool.depth,
          action: 'reading resumed' });
        this.paused = null;
        this.metrics.reading_paused.set(0);
      }
      return true;
    }
    if (room === 'cap' && this.dropOldest && this.spool.depth) {
      const dropped = this.spool.dropOldest(Math.max(Math.floor(this.spool.depth / 100), 100));
      this.metrics.spool_dropped.inc(dropped);
      this.metrics.spool_full.inc({ kind: room });
      this.log.event('warning', 'spool_full_dropped_oldest', { key: room, kind: room, dropped });
      return this.spool.room() === null;
    }
    this.pause(room);
    return false;
  }

  pause(kind, detail = {}) {
    if (this.paused === kind) return;
    this.paused = kind;
    this.metrics.spool_full.inc({ kind });
    this.metrics.reading_paused.set(1);
    this.log.event('error', 'spool_full', {
      key: kind, kind, spooled_frames: this.spool.depth, ...detail,
      action: kind === 'cap' ? 'reading paused until Cassandra drains the spool'
        : 'reading paused; free disk space (the spool still drains)',
    });
  }
}
