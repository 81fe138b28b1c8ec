// decode's verdicts and its summary (gateway/contract/process.md, "decode"): each frame judged as the gateway
// judges one from an input that is not trusted (signing.md), with the counters of this run only, kept in memory.
// Without keys nothing is judged: frames are counted unverified.

import { Verifier } from './signing.js';

const VERDICTS = ['accepted', 'bad_mac', 'replay', 'unsigned'];
/** Why reading a port ended. */
const ENDS = ['gone', 'signal', 'count', 'seconds'];

export class DecodeJudge {
  /**
   * policy: a signingPolicy, or null (no keys file: no verdicts). counters: Map source → last accepted counter to
   * start from (none for a run of decode; tests give some).
   */
  constructor(policy, counters = new Map()) {
    this.verifier = policy === null ? null : new Verifier(policy, counters);
    this.counts = { lines: 0, frames: 0, ...Object.fromEntries(VERDICTS.map((v) => [v, 0])), unverified: 0,
      status: 0, rejected: 0 };
  }

  /** One output line's result: its verdict when it is a frame and keys are given, else null; counted. */
  judge(decoded) {
    const { counts } = this;
    counts.lines++;
    if (decoded.kind !== 'frame') {
      counts[decoded.kind === 'status' ? 'status' : 'rejected']++;
      return null;
    }
    counts.frames++;
    if (this.verifier === null) {
      counts.unverified++;
      return null;
    }
    const verdict = this.verifier.verdict(decoded) ?? 'accepted';
    counts[verdict]++;
    return verdict;
  }

  /** The summary line's text after `GATEWAY decode: `. */
  summary(path, end) {
    if (!ENDS.includes(end)) throw new Error(`not an end: ${end}`);
    const fields = Object.entries(this.counts).map(([name, count]) => `${name}=${count}`).join(' ');
    return `port=${path} ${fields} end=${end}`;
  }
}
