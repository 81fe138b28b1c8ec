// What may leave the spool: each taken chunk of frames is followed until Cassandra has all of it (the Python
// gateway's write_ledger.py).

/** (source, day) pairs whose source_days row is known written; cleared past it. */
export const KNOWN_DAYS_MAX = 10_000;

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

/** The day_changes write of the chunks whose readings were written since the previous one. */
export class DayChanges {
  constructor(chunks) {
    this.chunks = chunks;
  }
}

/** One key per (source, day): the day's `YYYY-MM-DD` (a LocalDate's String()) has no '|'. */
function dayKey(source, day) {
  return `${day}|${source}`;
}

/**
 * Counts the requests taken and not yet succeeded (outstanding: ready, in flight or awaiting retry), moves a chunk
 * to `written` when its readings and source_days requests all succeeded, and gives back the chunks whose
 * day_changes request then succeeded: only those may be acknowledged to the spool (an analytics job that sees a
 * day change must find its readings).
 */
export class WriteLedger {
  constructor() {
    this.outstanding = 0;
    this.written = []; // readings written, day_changes not yet
    this.knownDays = new Set(); // dayKey()s of the pairs whose source_days row is written
  }

  get idle() {
    return this.outstanding === 0 && this.written.length === 0;
  }

  /** Whether the source_days row of (source, day) is known written (its request may be skipped). */
  isKnownDay(source, day) {
    return this.knownDays.has(dayKey(source, day));
  }

  /** requests more were taken, owned by chunk (or by a DayChanges / nobody when chunk is null). */
  expect(requests, chunk = null) {
    this.outstanding += requests;
    if (chunk !== null) chunk.remaining = requests;
  }

  /**
   * One request succeeded. Returns [chunk, acknowledged]: the chunk whose readings are now all written (or null)
   * and the chunks now fully written (a DayChanges' chunks), whose frames may leave the spool.
   */
  succeeded(owner) {
    this.outstanding -= 1;
    if (owner instanceof Chunk) {
      owner.remaining -= 1;
      if (owner.remaining === 0) {
        this.written.push(owner);
        return [owner, []];
      }
    } else if (owner instanceof DayChanges) {
      if (this.knownDays.size > KNOWN_DAYS_MAX) {
        this.knownDays.clear(); // junk sources must not grow it; forgetting only repeats idempotent writes
      }
      for (const chunk of owner.chunks) {
        for (const [source, day] of chunk.days) this.knownDays.add(dayKey(source, day));
      }
      return [null, owner.chunks];
    }
    return [null, []];
  }

  /** The chunks waiting for their day_changes write, handed to it. */
  takeWritten() {
    const chunks = this.written;
    this.written = [];
    return new DayChanges(chunks);
  }
}
