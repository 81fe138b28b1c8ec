// What may leave the spool: each taken chunk of frames is followed until Cassandra has all of it
// (gateway/contract/cassandra-writes.md, "Order, and when a frame is written").

import { contractNumber } from './contract-constants.js';
import { dayKey } from './day-marks.js';

/** (source, day) pairs whose source_days row is known written; cleared past it. */
export const KNOWN_DAYS_MAX = contractNumber('known_days_max');

/** Frames taken together: consecutive in the spool, so acknowledged as one id range. */
export class Chunk {
  /**
   * @param {number} firstId
   * @param {number} lastId
   * @param {Map<number, number>} receipts how many of its frames were read at each receipt time (ms): what the
   *   delivery latency is measured from (a chunk holds no frames: they would outlive young-generation GCs)
   * @param {number} rows
   * @param {Array<[string, object]>} days the (source, day) pairs its frames touch (write-plan.js `days`)
   */
  constructor(firstId, lastId, receipts, rows, days) {
    this.firstId = firstId;
    this.lastId = lastId;
    this.receipts = receipts;
    this.rows = rows;
    this.days = days;
    this.remaining = 0; // its readings and source_days requests not yet succeeded
  }
}

/**
 * A day_changes write marking days (gateway/contract/day-marks.md), and the readings requests waiting for it. Each
 * attempt is stamped when it is sent (sentAt: the gateway's monotonic clock, performance.now()).
 */
export class MarkWrite {
  constructor(days) {
    this.days = days;
    this.waiting = [];
    this.sentAt = 0;
  }
}

/**
 * Counts the requests taken and not yet succeeded (outstanding: ready, waiting for a mark, in flight or awaiting
 * retry) and gives back each chunk once its readings and source_days requests all succeeded: its frames may then
 * leave the spool (their days were marked before the readings were sent, so an analytics job that sees a day change
 * finds them).
 */
export class WriteLedger {
  constructor() {
    this.outstanding = 0;
    this.knownDays = new Set(); // dayKey()s of the pairs whose source_days row is written
  }

  get idle() {
    return this.outstanding === 0;
  }

  /** Whether the source_days row of (source, day) is known written (its request may be skipped). */
  isKnownDay(source, day) {
    return this.knownDays.has(dayKey(source, day));
  }

  /** requests more were taken, owned by chunk (or by a MarkWrite / nobody when chunk is null). */
  expect(requests, chunk = null) {
    this.outstanding += requests;
    if (chunk !== null) chunk.remaining = requests;
  }

  /** One request succeeded. Returns the chunk now fully written (its frames may leave the spool), or null. */
  succeeded(owner) {
    this.outstanding -= 1;
    if (owner instanceof Chunk) {
      owner.remaining -= 1;
      if (owner.remaining === 0) {
        if (this.knownDays.size > KNOWN_DAYS_MAX) {
          this.knownDays.clear(); // junk sources must not grow it; forgetting only repeats idempotent writes
        }
        for (const [source, day] of owner.days) this.knownDays.add(dayKey(source, day));
        return owner;
      }
    }
    return null;
  }
}
