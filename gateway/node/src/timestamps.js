// One timestamp per accepted frame: UTC, milliseconds (gateway/contract/README.md, "time.jsonl").
//
// An explicit `t` from the board is used as given when it is plausible, so replaying the same backfill writes the
// same keys. Otherwise the time of receipt is used, made strictly increasing per source: two frames of a source
// arriving within one millisecond would otherwise share a primary key and overwrite each other.

import cassandra from 'cassandra-driver';

const { LocalDate } = cassandra.types;

export const DAY_MS = 86_400_000;

/**
 * Receipt stamps are strictly increasing per source, also for a source forgotten (evicted to bound memory) and
 * seen again: an unknown source's stamps start above every forgotten stamp (the floor). Forgotten sources are the
 * least recently seen, so the floor is normally in the past and changes nothing; it matters only when stamps ran
 * ahead of the clock (many frames in one ms, or the clock stepped back).
 */
export class Stamper {
  /**
   * @param {number} maxFutureMs an explicit t at most this far after receipt is plausible
   * @param {number} maxAgeMs an explicit t at most this far before receipt is plausible
   * @param {Map<string, number>|Object<string, number>|null} [lastReceipt] each source's last receipt stamp, as
   *   a previous run left them in the spool
   * @param {number|null} [maxSources] how many sources the caller keeps state for (null: no bound)
   */
  constructor(maxFutureMs, maxAgeMs, lastReceipt = null, maxSources = null) {
    this.maxFuture = maxFutureMs;
    this.maxAge = maxAgeMs;
    this.floor = -1; // the newest stamp of any forgotten source
    // Carried over from before a restart (the spool keeps it): stamps keep increasing across restarts. Only the
    // newest maxSources are kept (the caller's bound); the rest, and any the caller did not load, are at most the
    // oldest stamp kept, which becomes the floor.
    const loaded = lastReceipt instanceof Map ? [...lastReceipt] : Object.entries(lastReceipt ?? {});
    let newest = loaded.sort((a, b) => a[1] - b[1]); // stable: equal stamps keep their order
    if (maxSources !== null && maxSources !== undefined && newest.length && newest.length >= maxSources) {
      newest = newest.slice(-maxSources);
      this.floor = newest[0][1];
    }
    this.lastReceipt = new Map(newest); // oldest stamp first
    this.changed = new Map(); // receipt stamps given since the caller last took them
  }

  /** The sources with a remembered stamp, the oldest stamp first (as loaded; a stamp given keeps its place). */
  sources() {
    return [...this.lastReceipt.keys()];
  }

  /** Drops a source's stamp (the caller evicted it); its later stamps, and any unknown source's, stay above it. */
  forget(source) {
    const last = this.lastReceipt.get(source);
    if (last === undefined) return;
    this.lastReceipt.delete(source);
    if (last > this.floor) this.floor = last;
  }

  /**
   * The frame's timestamp. t: its explicit time (ms) or null. Returns {ts_ms, explicit_t_refused}: the stamp, and
   * whether the frame carried a t outside the plausible window (then it is receipt-stamped).
   */
  stamp(source, t, receivedMs) {
    const hasT = t !== null && t !== undefined;
    if (hasT && receivedMs - this.maxAge <= t && t <= receivedMs + this.maxFuture) {
      return { ts_ms: t, explicit_t_refused: false };
    }
    const last = this.lastReceipt.get(source);
    const ts = Math.max(receivedMs, (last === undefined ? this.floor : last) + 1);
    this.lastReceipt.set(source, ts);
    this.changed.set(source, ts);
    return { ts_ms: ts, explicit_t_refused: hasT };
  }

  /**
   * The receipt stamps given since the last call, {source: ts_ms} (for the spool to persist), forgotten here. An
   * object without a prototype: a source named `__proto__` or `constructor` is an ordinary key.
   */
  takeChanged() {
    const changed = Object.create(null);
    for (const [source, ts] of this.changed) changed[source] = ts;
    this.changed.clear();
    return changed;
  }
}

/** The UTC day of a Unix-millisecond timestamp, in days since 1970-01-01 (negative before it). */
export function utcDayNumber(tsMs) {
  return Math.floor(tsMs / DAY_MS);
}

/**
 * The UTC date of a Unix-millisecond timestamp (the `day` of a readings partition), as the driver's LocalDate: it
 * encodes as a CQL `date`, and its String() is `YYYY-MM-DD`. Never a JS Date: the driver reads a Date's local
 * calendar day, which is not the UTC day east or west of Greenwich.
 */
export function utcDay(tsMs) {
  return new LocalDate(utcDayNumber(tsMs));
}
