// Per-source sequence numbers (gateway/contract/README.md, "sequence.jsonl"): drop radio retransmissions, count
// lost frames, board restarts and conflicting repeats.
//
// A frame with the source, seq and content of one stored at most the window ago is a retransmission: dropped.
// Same source and seq, other content, within the window: a conflict, kept and counted; the sequence does not
// move and the new content is remembered. A seq seen longer ago than the window, or no longer remembered (only
// the last REMEMBERED_SEQS distinct seqs are), is news. A seq 0 that does not follow 65535 is a board restart:
// the source's remembered seqs are forgotten (a seq 0 repeating the seq 0 just before it is still a duplicate).
// A source's first frame is never a gap or a restart, unless an earlier run stored the source's last safe seq S
// (resume(); gateway/contract/spool.md, "Seqs across a restart"): then seq 0 with S ≠ 65535 is a restart, and
// d = (seq − S − 1) mod 65536 is in order at 0, a gap of d below 32768, nothing at or above it (a repeat or a
// reordering across the restart: no content was stored, so it is never a duplicate). Such a verdict is `resumed`,
// so the caller can count a crash's possible loss apart.
//
// `content` is whatever the caller compares frames by (a string or a hash of t, metrics and values): compared
// with ===. How many sources are kept is the caller's bound: it forget()s the ones it evicts.

import { contractNumber } from './contract-constants.js';
import { SEQ_MODULUS } from './protocol.js';

const LAST_SEQ = SEQ_MODULUS - 1;
const HALF = SEQ_MODULUS / 2; // a resumed source's seq this far or more past its stored one is at or behind it
/** Seqs remembered per source: a contract number (sequence.jsonl's `remembered_seqs`), not a setting. */
export const REMEMBERED_SEQS = contractNumber('remembered_seqs');

// Verdicts, shared where they carry no count: {duplicate, missing, restarted, conflict, resumed}.
const verdict = (fields) => Object.freeze({ duplicate: false, missing: 0, restarted: false, conflict: false,
  resumed: false, ...fields });
const DUPLICATE = verdict({ duplicate: true });
export const NEXT = verdict({});
const RESTARTED = verdict({ restarted: true });
export const CONFLICT = verdict({ conflict: true });

export class SeqTracker {
  constructor(duplicateWindowMs, maxRemembered = REMEMBERED_SEQS) {
    this.window = duplicateWindowMs;
    this.max = maxRemembered;
    // Per source: {last: its last seq, seen: Map seq -> {ms, content}, oldest first (Map keeps insertion order)}.
    this.sources = new Map();
  }

  get size() {
    return this.sources.size;
  }

  forget(source) {
    this.sources.delete(source);
  }

  /** An earlier run's last safe seq of source: its next frame is judged against it (no seqs remembered). */
  resume(source, seq) {
    this.sources.set(source, { last: seq, seen: null });
  }

  observe(source, seq, nowMs, content) {
    const state = this.sources.get(source);
    if (state === undefined) {
      this.sources.set(source, { last: seq, seen: new Map([[seq, { ms: nowMs, content }]]) });
      return NEXT;
    }
    const { last, seen } = state;
    if (seen === null) { // the first frame after a gateway restart
      state.last = seq;
      state.seen = new Map([[seq, { ms: nowMs, content }]]);
      if (seq === 0 && last !== LAST_SEQ) return RESTARTED;
      const missing = (seq - last - 1 + SEQ_MODULUS) % SEQ_MODULUS;
      return verdict({ missing: missing < HALF ? missing : 0, resumed: true });
    }
    if (seq === 0 && last !== LAST_SEQ) {
      if (last === 0) {
        const before = seen.get(0);
        if (before !== undefined && before.content === content && nowMs - before.ms <= this.window) return DUPLICATE;
      }
      seen.clear(); // the previous run's seqs say nothing about the new run's
      seen.set(0, { ms: nowMs, content });
      state.last = 0;
      return RESTARTED;
    }
    const before = seen.get(seq);
    if (before !== undefined) {
      if (nowMs - before.ms <= this.window) {
        if (before.content === content) return DUPLICATE;
        seen.set(seq, { ms: nowMs, content }); // keeps its place in the order
        return CONFLICT;
      }
      seen.delete(seq); // seen too long ago: a wrapped counter, remembered anew below
    } else if (seen.size >= this.max) {
      seen.delete(seen.keys().next().value); // the oldest: only the last few seqs count
    }
    seen.set(seq, { ms: nowMs, content });
    state.last = seq;
    const expected = last === LAST_SEQ ? 0 : last + 1;
    if (seq === expected) return NEXT;
    return { duplicate: false, missing: (seq - expected + SEQ_MODULUS) % SEQ_MODULUS, restarted: false, conflict: false,
      resumed: false };
  }
}

/** The per-source counters a verdict moves, {name: increment} (names of telemetry_gateway_<name>_total{source});
 * unclean: the spool showed a crash, so a resumed source's gap is also counted as possibly lost. */
export function verdictCounts(v, unclean = false) {
  const counts = {};
  if (v.duplicate) counts.duplicates = 1;
  if (v.missing) counts.seq_missing_frames = v.missing;
  if (v.restarted) counts.board_restarts = 1;
  if (v.conflict) counts.seq_conflicts = 1;
  if (v.missing && v.resumed && unclean) counts.frames_possibly_lost = v.missing;
  return counts;
}
