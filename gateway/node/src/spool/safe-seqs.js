// Which per-source seqs the spool may store in source_seqs (gateway/contract/spool.md, "Seqs across a restart").
//
// A stored seq says "every frame of this source up to here is safe": after a crash the next run counts the seq gap
// from it as frames possibly lost. So a row may only name a frame once it, and every frame accepted before it, is
// committed or acknowledged. With "batch" and "interval" every frame is committed as it comes: a commit's rows are
// its frames' newest seqs. With "deferred" a frame held in memory is not safe yet: SafeSeqs keeps each group's
// newest seqs until no held frame has an id at or below the group's highest. Pure bookkeeping: the spool says
// which ids are still held and writes the rows.

import { contractNumber } from '../contract-constants.js';

// Deferred: rows ride with a commit made anyway (the stamp ceilings', about once a minute) once this old, and get a
// commit of their own (which takes the near ceilings along) only once ROWS_ALONE_MS old. Each write adds a page of
// a table of its own to the WAL; a commit of its own would also write the WAL index and fsync: the SD card's wear.
export const ROWS_INTERVAL_MS = contractNumber('seq_rows_interval_ms');
export const ROWS_ALONE_MS = contractNumber('seq_rows_alone_ms');
// A source with no stored row (new, or never stored) has its row written as soon as it is writable, with the next
// commit or one of its own: otherwise the frames it loses in a crash in its first minute would count nowhere. One
// small write per new source; forgetting a source past this many costs it one more.
const MAX_KNOWN = 4096;

/** The newest (by arrival) seq and ts_ms per source among frames (rows with a `seq`; null or absent: no seq, e.g.
 * legacy JSON or the room board's CSV, which changes nothing): a Map source → [seq, ts_ms]. */
export function newestSeqs(frames) {
  const seqs = new Map();
  for (const frame of frames) {
    if (frame.seq != null) seqs.set(frame.source, [frame.seq, frame.ts_ms]);
  }
  return seqs;
}

export class SafeSeqs {
  /** stored: the sources with a row in source_seqs. */
  constructor(stored = []) {
    this.known = new Set(stored);
    this.groups = []; // [highest id, Map source → [seq, ts_ms]], in id order, from index head on
    this.head = 0;
    this.writable = new Map();
  }

  /** A group of frames with ids up to highestId was handed to the spool; seqs: its newest per source. */
  accepted(highestId, seqs) {
    if (seqs.size) this.groups.push([highestId, seqs]);
  }

  /** Groups whose every id is below the lowest id still held (null: nothing held) are safe now. */
  release(lowestHeldId) {
    const { groups } = this;
    while (this.head < groups.length && (lowestHeldId === null || groups[this.head][0] < lowestHeldId)) {
      for (const [source, row] of groups[this.head][1]) this.writable.set(source, row);
      groups[this.head] = undefined;
      this.head += 1;
    }
    if (this.head === groups.length) {
      this.groups = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > groups.length) {
      this.groups = groups.slice(this.head);
      this.head = 0;
    }
  }

  /** The rows to write with a commit after which the lowest id held is lowestHeldId (null: none), with group (or
   * null: [highest id, seqs]) accepted in it: [source, [seq, ts_ms]] pairs. Changes nothing (accepted() and
   * release() do, once the commit is done). */
  rowsIf(lowestHeldId, group) {
    const safe = (highestId) => lowestHeldId === null || highestId < lowestHeldId;
    let rows = this.writable;
    for (let i = this.head; i < this.groups.length && safe(this.groups[i][0]); i++) {
      if (rows === this.writable) rows = new Map(rows);
      for (const [source, row] of this.groups[i][1]) rows.set(source, row);
    }
    if (group !== null && group[1].size && safe(group[0])) {
      rows = new Map(rows);
      for (const [source, row] of group[1]) rows.set(source, row);
    }
    return [...rows];
  }

  /** Milliseconds until writable rows are to be written (0 or less: now), given when rows were last written,
   * riding with a commit made anyway or (riding false) by one of their own; null while none wait. */
  dueInMs(lastWrittenAt, now, riding = false) {
    if (!this.writable.size) return null;
    if (this.anyNew(this.writable.keys())) return 0;
    return lastWrittenAt + (riding ? ROWS_INTERVAL_MS : ROWS_ALONE_MS) - now;
  }

  /** Whether any of these rows' ([source, row] pairs or sources) has no stored row: then it is due at once. */
  anyNew(rows) {
    for (const row of rows) {
      if (!this.known.has(Array.isArray(row) ? row[0] : row)) return true;
    }
    return false;
  }

  /** The commit holding rows() is done. */
  written() {
    if (this.known.size > MAX_KNOWN) this.known.clear();
    for (const source of this.writable.keys()) this.known.add(source);
    this.writable = new Map();
  }
}
