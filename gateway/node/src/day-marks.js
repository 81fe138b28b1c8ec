// Day marks (gateway/contract/day-marks.md): which (source, UTC day) pairs may have readings written now.
//
// A readings write for (source, day) is sent only while that day has a fresh mark: a `day_changes` row whose write
// Cassandra acknowledged, from an attempt sent at most MARK_FRESH_MS before (on the gateway's monotonic clock,
// performance.now()). A day without one gets a mark first, and its readings wait for it. No I/O here: the sender
// (sender.js) sends the marks and the readings, and tells this when a mark is acknowledged.

import { contractNumber } from './contract-constants.js';

/**
 * Half the analytics' default --clock-skew (600 s): every readings write completes within MARK_FRESH_MS plus one
 * request timeout of its mark's written_at, well inside the margin the daily job allows.
 */
export const MARK_FRESH_MS = contractNumber('mark_fresh_ms');
/** (source, day) pairs remembered; past it the oldest are forgotten (they only get a mark again). */
const MARKS_MAX = contractNumber('day_marks_max');
export const HOUR_MS = 3_600_000;

/** One key per (source, day): the day's `YYYY-MM-DD` (a LocalDate's String()) has no '|'. */
export function dayKey(source, day) {
  return `${day}|${source}`;
}

/**
 * [bucket, written_at] in ms since the epoch for a mark attempt sent at wallMs (the writer's wall clock): the UTC
 * hour of that instant, and the instant itself.
 */
export function markInstant(wallMs) {
  return [wallMs - (((wallMs % HOUR_MS) + HOUR_MS) % HOUR_MS), wallMs];
}

/**
 * Per (source, day): when the attempt of its last acknowledged mark was sent (monotonic ms), and which mark write
 * is in flight for it. Days are [source, day] pairs (day a LocalDate or its `YYYY-MM-DD`). Memory is bounded:
 * entries older than freshMs are dropped, and at most maxEntries are kept (pruned whenever marks are recorded).
 */
export class DayMarks {
  constructor(freshMs = MARK_FRESH_MS, maxEntries = MARKS_MAX) {
    this.freshMs = freshMs;
    this.maxEntries = maxEntries;
    this.marked = new Map(); // dayKey → sent time; in the order recorded: oldest first
    this.inFlight = new Map(); // dayKey → the mark write in flight for it
  }

  get size() {
    return this.marked.size;
  }

  isFresh(source, day, nowMs) {
    const sent = this.marked.get(dayKey(source, day));
    return sent !== undefined && nowMs - sent <= this.freshMs;
  }

  /**
   * [unmarked, toMark]: the dayKeys of the days without a fresh mark (a Set), whose readings must wait, and those
   * of the days with no mark in flight, which need one now ([source, day] pairs in the order given).
   */
  needs(days, nowMs) {
    const unmarked = new Set();
    const toMark = [];
    for (const [source, day] of days) {
      const key = dayKey(source, day);
      if (unmarked.has(key) || this.isFresh(source, day, nowMs)) continue;
      unmarked.add(key);
      if (!this.inFlight.has(key)) toMark.push([source, day]);
    }
    return [unmarked, toMark];
  }

  /** A mark write for days is started (its first attempt is about to be sent). */
  begin(days, mark) {
    for (const [source, day] of days) this.inFlight.set(dayKey(source, day), mark);
  }

  /** The mark write in flight for (source, day), or undefined. */
  pending(source, day) {
    return this.inFlight.get(dayKey(source, day));
  }

  /** Cassandra acknowledged mark (for days), whose acknowledged attempt was sent at sentMs. */
  acknowledged(mark, days, sentMs, nowMs) {
    const { marked } = this;
    for (const [source, day] of days) {
      const key = dayKey(source, day);
      if (this.inFlight.get(key) === mark) this.inFlight.delete(key);
      const previous = marked.get(key);
      marked.delete(key); // re-inserted last: a Map keeps insertion order
      marked.set(key, previous === undefined ? sentMs : Math.max(previous, sentMs));
    }
    // Prune: the oldest first, up to the first fresh one once within the bound (a stale one recorded after a fresh
    // one goes later; isFresh never trusts it meanwhile).
    for (const [key, sent] of marked) {
      if (nowMs - sent <= this.freshMs && marked.size <= this.maxEntries) break;
      marked.delete(key);
    }
  }
}
