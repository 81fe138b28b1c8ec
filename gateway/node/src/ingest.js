// The ingest stage: decoded frames → duplicate check, timestamp → spool, committed in groups
// (gateway/contract/spool.md).
//
// Readers hand each read's frames over with the credits the read was made under (line-handler.js); a credit goes
// back once those frames are committed, so what a crash can lose is bounded to a few reads. While the spool has no
// room (its cap with when_full = pause, or a full disk) the credits of committed reads are held back: the readers
// pause and the bytes wait in the kernel, not in memory (reading-pause.js). Frames already read are always
// committed: past the cap into the spool's headroom, on a full disk into the room the spool's reserve file gives up
// (spool/room.js). Each frame is judged and stamped by frame-acceptor.js.
//
// Everything runs on the event loop: a step commits what arrived since the last one. Reads that arrive while a
// commit's fsync blocks the loop are grouped into the next commit, which is the group commit. With fsync = deferred
// the spool holds new frames in memory while that is safe (the sender's link() says whether Cassandra keeps up) and
// commits those not acknowledged in time: a timer wakes a step when a commit is due (none while nothing waits), a
// link turning unsafe wakes one at once, and a stop commits what is still held.
//
// An unexpected error in a step is a bug: the stage dies (onDied: the service logs stage_died and stops with exit
// status 1), and its stop still commits every frame held in memory (gateway/contract/spool.md, "Every stop keeps
// what was read"). TELEMETRY_GATEWAY_FAILPOINT=ingest_after_frames:N makes such an error for the conformance harness.

import { contractNumber } from './contract-constants.js';
import { logCounterKeys } from './counter-keys-log.js';
import { FlushTimer } from './flush-timer.js';
import { FrameAcceptor } from './frame-acceptor.js';
import { ERROR_CHARS, RateLimitedLog, event } from './logs.js';
import { ROOM_CHECK_MS, ReadingPause } from './reading-pause.js';
import { loadSigningPolicy } from './signing-config.js';
import { Verifier } from './signing.js';

const GROUP_MAX = 5000; // frames per commit at most: bounds one transaction's time and memory
const RETRY_MS = 500; // after a commit found no room at all
const STOP_GRACE_MS = contractNumber('stop_grace_ms'); // at shutdown, how long a commit that finds no room is retried

export class Ingest {
  /** onSpooled(): frames went to the spool; failAfterFrames: the failpoint's N (null: none); onDied(error): an
   * unexpected error ended the stage (its stop then only commits what the spool holds in memory); onAccepted(rows):
   * each group of accepted rows, in order (the alert rules). */
  constructor(config, spool, metrics, onSpooled, { failAfterFrames = null, onDied = null, onAccepted = null } = {}) {
    this.queue = []; // {frames, receivedMs, credits}: bounded by the readers' credits
    this.spool = spool;
    this.metrics = metrics;
    this.onSpooled = onSpooled;
    this.onAccepted = onAccepted;
    const storedSeqs = spool.lastSourceSeqs(config.decode.max_sources);
    /** Sources with a seq stored by an earlier run. */
    this.storedSeqs = storedSeqs.size;
    this.acceptor = new FrameAcceptor(config, metrics, spool.lastReceiptStamps(config.decode.max_sources),
      storedSeqs, spool.uncleanStop);
    // The keys are read here, at start only (signing.md); the counters continue from the spool's.
    this.verifier = new Verifier(loadSigningPolicy(config), spool.lastCounters(), spool.lastCounterKeys());
    this.acceptor.verifier = this.verifier;
    logCounterKeys(this.verifier, spool.path);
    this.failAfterFrames = failAfterFrames;
    this.acceptedFrames = 0; // handed to the spool: counted only with a failpoint
    this.onDied = onDied ?? ((error) => { throw error; });
    this.died = null; // the error that ended the stage
    /** Frames accepted and not handed to the spool: lost at a stop that could not commit them. */
    this.lostFrames = 0;
    metrics.spool_holding.set(spool.holding ? 1 : 0);
    this.groupLimit = GROUP_MAX; // halved while commits find no room, so a group fits what room is left
    this.acked = []; // [firstId, lastId] ranges acknowledged by the sender
    this.log = new RateLimitedLog();
    this.room = new ReadingPause(spool, metrics, config.spool.when_full === 'drop_oldest');
    this.room.hasRoom(); // a spool opened without room pauses reading from the start, and says so
    this.pending = [];
    this.pendingCredits = []; // of the reads in pending: back once pending is committed
    this.stamps = {};
    this.timer = null;
    this.immediate = null;
    this.flush = new FlushTimer(() => this.schedule()); // deferred: wakes a step when the oldest held frame is due
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

  /** From the sender: its link to Cassandra changed (connected; its last write succeeded). Frames held in memory
   * are committed at once when that makes holding unsafe. */
  link(connected, writeOk) {
    if (this.spool.setLink(connected, writeOk)) this.schedule();
    this.metrics.spool_holding.set(this.spool.holding ? 1 : 0);
  }

  /** Commits what was handed over (retrying a full spool for a bounded time); resolves when done. After the stage
   * died: only what the spool holds in memory. */
  stop() {
    if (!this.stopped) {
      this.stopDeadline = performance.now() + STOP_GRACE_MS;
      this.stopped = new Promise((resolve) => { this.resolveStopped = resolve; });
      if (this.died === null) this.schedule();
      else this.stopDead();
    }
    return this.stopped;
  }

  /** The sources the spool knew at start (receipt stamps, stored seqs): the alert rules' silence watches them. */
  get knownSources() {
    return [...new Set([...this.acceptor.recent.keys(), ...this.acceptor.seq.sources.keys()])];
  }

  /** The per-source tally of accepted frames (status-tally.js). */
  get statusTally() {
    return this.acceptor.tally;
  }

  /** After the stage died: frames read and never handed to the spool (accepted ones pending, reads queued). */
  unspooledFrames() {
    if (this.died === null) return 0;
    return this.pending.length + this.queue.reduce((sum, read) => sum + read.frames.length, 0);
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
    if (this.died !== null) return;
    try {
      this.stepOnce();
    } catch (error) { // a bug: the stage is dead, and the service stops the gateway (exit status 1)
      this.die(error);
    }
  }

  stepOnce() {
    const now = performance.now();
    const stopping = this.stopped !== null;
    if (this.pending.length === 0) {
      const [frames, credits] = this.collect();
      this.pending = frames;
      this.pendingCredits.push(...credits);
      this.stamps = this.acceptor.stamper.takeChanged();
    }
    const acked = this.acked;
    this.acked = [];
    if (this.pending.length || acked.length || this.spool.flushDelayMs() === 0) {
      const group = this.pending.length > this.groupLimit ? this.pending.slice(0, this.groupLimit) : this.pending;
      if (this.commit(group, acked, this.stamps, stopping)) {
        this.pending = group === this.pending ? [] : this.pending.slice(group.length);
        this.stamps = {};
        this.groupLimit = Math.min(GROUP_MAX, this.groupLimit * 2);
        if (this.failAfterFrames !== null && group.length) this.failpoint(group.length);
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
    this.room.releaseIfRoom(now);
    if (this.pending.length || this.queue.length || this.acked.length) {
      this.schedule();
    } else if (stopping && this.syncing === 0) {
      this.commitHeldAndStop(now);
      return;
    } else if (this.room.withheld.length) {
      this.schedule(ROOM_CHECK_MS);
    }
    this.flush.arm(this.spool.flushDelayMs());
  }

  /** At a stop, once everything handed over is committed: what is still held in memory goes into the file, with
   * the receipt stamps at their real values (deferred; nothing to do with the other policies). */
  commitHeldAndStop(now) {
    if (this.commit([], [], null, true, true)) this.finishStop();
    else if (now > this.stopDeadline) this.abandonStop();
    else this.schedule(RETRY_MS);
  }

  /** The stop's grace is over and the spool still has no room: what was not committed is lost (the spool's close
   * tries its held frames once more and says how many it could not commit). */
  abandonStop() {
    event('error', 'shutdown_with_unspooled_frames', {
      frames: this.pending.length + this.spool.heldFrames, reason: 'no room in the spool or on its disk',
      note: 'these frames are lost',
    });
    this.lostFrames += this.pending.length;
    this.pending = [];
    this.finishStop();
  }

  /** The failpoint: an unexpected error once the accepted frames handed to the spool reached N, right after the
   * group that brought them there. */
  failpoint(frames) {
    this.acceptedFrames += frames;
    if (this.acceptedFrames >= this.failAfterFrames) {
      throw new Error(`failpoint ingest_after_frames:${this.failAfterFrames}: ${this.acceptedFrames} frames accepted`);
    }
  }

  /** An unexpected error ended the stage: nothing more is taken or committed but, at the stop, what the spool holds
   * in memory. Frames read and not handed to the spool are lost (unspooledFrames()). */
  die(error) {
    this.died = error;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.flush.clear();
    if (this.stopped !== null) this.stopDead();
    this.onDied(error);
  }

  /** The stop of a dead stage: the held frames (with their ids) and real receipt stamps go into the file, retried
   * while there is no room, for the same grace as any stop. */
  stopDead() {
    let done;
    try {
      done = this.commit([], [], null, true, true);
    } catch (error) { // the spool itself fails: its close says what could not be committed
      this.log.event('error', 'spool_commit_failed', { error: String(error?.message).slice(0, ERROR_CHARS),
        action: 'stopping; frames held in memory may be lost' });
      done = true;
    }
    if (done) this.finishStop();
    else if (performance.now() > this.stopDeadline) this.abandonStop();
    else this.timer = setTimeout(() => { this.timer = null; this.stopDead(); }, RETRY_MS);
  }

  /** The credits of committed reads go back (through the room check) once their frames are on the disk. */
  returnWhenDurable(credits) {
    this.syncing += 1;
    this.spool.whenDurable().then(() => {
      this.syncing -= 1;
      this.room.withhold(credits);
      this.schedule();
    }, (error) => { // the disk failed the fsync: reading stays paused for these reads; tried again
      this.syncing -= 1;
      this.log.event('error', 'spool_sync_failed', { error: String(error.message).slice(0, ERROR_CHARS),
        action: 'retrying; reading waits' });
      setTimeout(() => this.returnWhenDurable(credits), RETRY_MS);
    });
  }

  finishStop() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.flush.clear();
    this.resolveStopped();
  }

  /** The reads queued, up to GROUP_MAX frames: [the rows to commit, the reads' credits]. */
  collect() {
    const reads = [];
    for (let frames = 0; this.queue.length && frames < GROUP_MAX;) {
      reads.push(this.queue.shift());
      frames += reads.at(-1).frames.length;
    }
    const accepted = this.acceptor.acceptReads(reads);
    if (accepted.length && this.onAccepted !== null) this.onAccepted(accepted);
    return [accepted, reads.map((read) => read.credits)];
  }

  /** final: the stop's commit of what the spool holds in memory (frames, acked and stamps are empty). */
  commit(frames, acked, stamps, stopping, final = false) {
    let written;
    try {
      written = final ? this.spool.commitHeld()
        : this.spool.commit(frames, acked, stamps, this.verifier.takeChanged());
    } catch (error) {
      if (error?.name !== 'SpoolFull') throw error;
      const kind = error.capReached ? 'cap' : 'disk';
      if (stopping && error.capReached) this.spool.liftCap(); // kept past the cap rather than lost at exit
      this.room.pause(kind, { waiting: final ? this.spool.heldFrames : frames.length, detail: error.message });
      return false;
    }
    if (written) this.metrics.spool_frames_committed.inc(written);
    this.metrics.spool_frames.set(this.spool.depth);
    this.metrics.spool_holding.set(this.spool.holding ? 1 : 0);
    if (frames.length) this.onSpooled();
    return true;
  }
}
