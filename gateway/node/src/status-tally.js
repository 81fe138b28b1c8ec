// Per-source tally for the status page (gateway/contract/status.md): the last frame and its values, frames per
// minute over the last 5 minutes, and since start seq gaps, duplicates and the whole frames refused (signing
// verdicts). A pure function of the events fed to it and the clock readings passed in.

import { contractNumber } from './contract-constants.js';
import { SeriesTally } from './status-series.js';

/** Frames per minute are counted over the last 300 whole seconds, the current one included. */
const WINDOW_S = contractNumber('status_window_ms') / 1000;
/** Refused frames of one source in the window that make a burst (status.md: someone on the air, or a board set up
 * wrong). */
const BURST = contractNumber('refused_burst_frames');

/** One more event at receivedMs, in an array of [second, count] kept to the window of the newest second. */
function countIn(seconds, receivedMs) {
  const second = Math.floor(receivedMs / 1000);
  const last = seconds.at(-1);
  if (last !== undefined && last[0] === second) {
    last[1] += 1;
  } else {
    seconds.push([second, 1]);
    let old = 0;
    while (seconds[old][0] <= second - WINDOW_S) old += 1;
    if (old) seconds.splice(0, old);
  }
}

function inWindow(seconds, nowMs) {
  const now = Math.floor(nowMs / 1000);
  const first = now - WINDOW_S; // seconds after this one are in the window
  let count = 0;
  for (const [second, n] of seconds) if (second > first && second <= now) count += n;
  return count;
}

export class SourceTally {
  constructor() {
    /** @type {Map<string, {lastReceivedMs: number|null, valuesTsMs: number|null, values: Array<[string, number]>,
     *   seqGaps: number, duplicates: number, rejects: Map<string, number>, seconds: Array<[number, number]>}>} */
    this.sources = new Map();
    this.series = new SeriesTally(); // the sparklines, fed by the caller with each accepted frame's numbers
  }

  state(source) {
    let state = this.sources.get(source);
    if (state === undefined) {
      state = { lastReceivedMs: null, valuesTsMs: null, values: [], seqGaps: 0, duplicates: 0, rejects: new Map(),
        seconds: [], refusedSeconds: [] };
      this.sources.set(source, state);
    }
    return state;
  }

  /** An accepted frame (stored, not a duplicate), read at receivedMs, its readings ([metric, value]) at tsMs. */
  frame(source, receivedMs, tsMs, values) {
    const state = this.state(source);
    if (state.lastReceivedMs === null || receivedMs >= state.lastReceivedMs) {
      state.lastReceivedMs = receivedMs;
      state.valuesTsMs = tsMs;
      state.values = values;
    }
    countIn(state.seconds, receivedMs);
  }

  duplicate(source) {
    this.state(source).duplicates += 1;
  }

  gap(source, missing) {
    this.state(source).seqGaps += missing;
  }

  /** A whole frame of this source refused (a signing verdict), read at receivedMs. Counted only for a source
   * already listed or one with a key: forged names cannot grow the table. */
  reject(source, reason, keyed, receivedMs) {
    if (!keyed && !this.sources.has(source)) return;
    const state = this.state(source);
    state.rejects.set(reason, (state.rejects.get(reason) ?? 0) + 1);
    countIn(state.refusedSeconds, receivedMs);
  }

  /** A source the gateway no longer tracks ([decode] max_sources). */
  forget(source) {
    this.sources.delete(source);
    this.series.forget(source);
  }

  /** Per source, when its last frame was read. */
  lastSeenMs() {
    const seen = new Map();
    for (const [source, state] of this.sources) {
      if (state.lastReceivedMs !== null) seen.set(source, state.lastReceivedMs);
    }
    return seen;
  }

  /** Every source, sorted by its id's code points, as of nowMs. */
  view(nowMs) {
    return [...this.sources.keys()].sort(byCodePoint).map((source) => {
      const state = this.sources.get(source);
      return { source, lastReceivedMs: state.lastReceivedMs, valuesTsMs: state.valuesTsMs, values: state.values,
        framesPerMinute: inWindow(state.seconds, nowMs) / (WINDOW_S / 60), seqGaps: state.seqGaps,
        duplicates: state.duplicates,
        rejects: Object.fromEntries([...state.rejects].sort(([a], [b]) => byCodePoint(a, b))),
        refusedBurst: inWindow(state.refusedSeconds, nowMs) >= BURST };
    });
  }
}

/** Sorts strings by code point (as Python's sorted does), not by UTF-16 unit. */
export function byCodePoint(a, b) {
  if (a === b) return 0;
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
    if (x[i] !== y[i]) return x[i].codePointAt(0) - y[i].codePointAt(0);
  }
  return x.length - y.length;
}

/** No frame for longer than staleAfterMs (or none since start). */
export function isStale(lastReceivedMs, nowMs, staleAfterMs) {
  return lastReceivedMs === null || nowMs - lastReceivedMs > staleAfterMs;
}
