// Frames held in memory by the deferred spool policy (gateway/contract/spool.md, "`deferred` in detail"): each has
// its spool id already; those Cassandra acknowledges in time are never written, the others are committed once due.
// Pure bookkeeping, no I/O and no clock: the deferred policy (policies.js) gives the time and makes the commits.
//
// Ids are given one up per frame in arrival order, so the FIFO of (id, time held) is sorted by id as well as by age:
// a take or an acknowledgement finds its place by binary search and costs what it touches, not what is held.

import { contractNumber } from '../contract-constants.js';

// Past this many the oldest are committed at once: memory stays bounded.
export const MAX_HELD = contractNumber('held_frames_max');

export class HeldFrames {
  /** holdMs: how long a frame waits for its acknowledgement before it is due; maxHeld: see MAX_HELD. */
  constructor(holdMs, maxHeld = MAX_HELD) {
    this.holdMs = holdMs;
    this.maxHeld = maxHeld;
    this.frames = new Map(); // id → frame, as take() returns it
    // The FIFO, oldest first, from index head on. Ids acknowledged or committed linger until the head passes them.
    this.ids = [];
    this.heldAt = [];
    this.head = 0;
  }

  get size() {
    return this.frames.size;
  }

  /** Frames with ids above every id held before, in id order; now: the spool's monotonic clock (ms). */
  hold(frames, now) {
    for (const frame of frames) {
      this.frames.set(frame.id, frame);
      this.ids.push(frame.id);
      this.heldAt.push(now);
    }
  }

  /** The oldest held frames with an id above afterId, at most limit, in id order. */
  take(afterId, limit) {
    const taken = [];
    for (let i = this.indexAbove(afterId); i < this.ids.length && taken.length < limit; i++) {
      const frame = this.frames.get(this.ids[i]);
      if (frame !== undefined) taken.push(frame);
    }
    return taken;
  }

  /** Drops the held frames of the acknowledged inclusive range [first, last]; true if some of its ids were not
   * held (committed before, or left by an earlier run): those rows must be deleted from the spool file. */
  acknowledge(first, last) {
    let dropped = 0;
    for (let i = this.indexAbove(first - 1); i < this.ids.length && this.ids[i] <= last; i++) {
      if (this.frames.delete(this.ids[i])) dropped += 1;
    }
    return dropped < last - first + 1;
  }

  /** The held frames to commit now (id order): held holdMs or longer, the oldest beyond maxHeld, or (everything)
   * all of them. They stay held until committed() says their commit is done. */
  due(now, everything = false) {
    this.dropGone();
    if (everything) return [...this.frames.values()]; // a Map keeps insertion order: id order
    let over = this.frames.size - this.maxHeld;
    const due = [];
    for (let i = this.head; i < this.ids.length; i++) {
      const frame = this.frames.get(this.ids[i]);
      if (frame === undefined) continue;
      if (now - this.heldAt[i] < this.holdMs && over <= 0) break;
      due.push(frame);
      over -= 1;
    }
    return due;
  }

  /** When the oldest held frame is due (the clock's ms; -Infinity: now, past maxHeld), or null if none is held. */
  dueAt() {
    this.dropGone();
    if (this.frames.size === 0) return null;
    return this.frames.size > this.maxHeld ? -Infinity : this.heldAt[this.head] + this.holdMs;
  }

  /** The lowest id held once the oldest skip held frames are gone (a commit's due frames are the oldest), or null. */
  lowestId(skip = 0) {
    if (skip >= this.frames.size) return null;
    let passed = 0;
    for (let i = this.head; i < this.ids.length; i++) {
      if (!this.frames.has(this.ids[i])) continue;
      if (passed === skip) return this.ids[i];
      passed += 1;
    }
    return null;
  }

  /** These frames are in the spool file now. */
  committed(frames) {
    for (const frame of frames) this.frames.delete(frame.id);
  }

  /** The FIFO index of the first id above id. */
  indexAbove(id) {
    let lo = this.head;
    let hi = this.ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ids[mid] <= id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Moves the head past frames no longer held; the arrays are cut once most of them is behind it. */
  dropGone() {
    while (this.head < this.ids.length && !this.frames.has(this.ids[this.head])) this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.ids.length) {
      this.ids = this.ids.slice(this.head);
      this.heldAt = this.heldAt.slice(this.head);
      this.head = 0;
    }
  }
}

/** Two lists of frames in id order (held ones first) as one, each id once, at most limit frames. */
export function mergeById(held, committed, limit) {
  const merged = [];
  let h = 0;
  let c = 0;
  while (merged.length < limit && (h < held.length || c < committed.length)) {
    const a = held[h];
    const b = committed[c];
    if (b === undefined || (a !== undefined && a.id < b.id)) {
      merged.push(a);
      h += 1;
    } else {
      if (a !== undefined && a.id === b.id) h += 1; // committed while the take ran: the same frame
      merged.push(b);
      c += 1;
    }
  }
  return merged;
}
