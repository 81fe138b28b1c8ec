// Verification of signed frames (gateway/contract/signing.md): the tag, the counter, and whether a source may
// still send unsigned frames. The functional core: keys, settings and last counters in, a verdict per frame out.

import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNING_REJECT_REASONS = Object.freeze(['bad_mac', 'replay', 'unsigned']);
const TAG_BYTES = 6;

/**
 * keys: Map source → 16-byte Buffer; unsignedAllowed: Set of sources with a key whose unsigned frames are still
 * accepted; mustSign: 'keyed' (the sources with a key must sign) or 'all' (every source must).
 */
export function signingPolicy(keys, unsignedAllowed = new Set(), mustSign = 'keyed') {
  return {
    keys,
    unsignedAllowed,
    mustSign,
    signsOnly: (source) => !unsignedAllowed.has(source) && (mustSign === 'all' || keys.has(source)),
  };
}

export function tagOf(key, signed) {
  return createHmac('sha256', key).update(signed).digest().subarray(0, TAG_BYTES);
}

export class Verifier {
  /** counters: Map source → last accepted counter. */
  constructor(policy, counters) {
    this.policy = policy;
    this.counters = new Map(counters);
    this.changed = new Map();
  }

  /** null: accept the frame; else the reject reason. An accepted signed frame's counter becomes its source's. */
  verdict(frame) {
    if (frame.format !== 'signed') return this.policy.signsOnly(frame.source) ? 'unsigned' : null;
    const key = this.policy.keys.get(frame.source);
    if (key === undefined) return 'bad_mac';
    // The tag first: only a frame with a good tag says anything about the counter.
    const tag = Buffer.from(frame.tag, 'hex');
    if (tag.length !== TAG_BYTES || !timingSafeEqual(tagOf(key, Buffer.from(frame.signed, 'hex')), tag)) {
      return 'bad_mac';
    }
    if (frame.counter <= (this.counters.get(frame.source) ?? -1)) return 'replay';
    this.counters.set(frame.source, frame.counter);
    this.changed.set(frame.source, frame.counter);
    return null;
  }

  /** The counters accepted since the last call: the spool stores them with the frames they came with. */
  takeChanged() {
    const { changed } = this;
    this.changed = new Map();
    return changed;
  }
}
