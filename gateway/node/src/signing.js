// Verification of signed frames (gateway/contract/signing.md): the tag, the counter, and whether a source may
// still send unsigned frames. The functional core: keys, settings and last counters in, a verdict per frame out.

import { createHmac, timingSafeEqual } from 'node:crypto';

import { contractNumber } from './contract-constants.js';

const TAG_BYTES = contractNumber('signed_tag_bytes');
// HMAC's message for a key's fingerprint: text, so never a node's signed bytes (they start with version byte 2).
const FINGERPRINT_MESSAGE = 'telemetry counter fingerprint';

/**
 * keys: Map source → 16-byte Buffer; unsignedAllowed: Set of sources whose unsigned frames are accepted on any
 * input; mustSign: 'keyed' (the sources with a key must sign, and once keys exist every source on an input not
 * trusted) or 'all' (every source must).
 */
export function signingPolicy(keys, unsignedAllowed = new Set(), mustSign = 'keyed') {
  return {
    keys,
    unsignedAllowed,
    mustSign,
    signsOnly: (source, trusted = false) => !unsignedAllowed.has(source)
      && (mustSign === 'all' || keys.has(source) || (keys.size > 0 && !trusted)),
  };
}

function tagOf(key, signed) {
  return createHmac('sha256', key).update(signed).digest().subarray(0, TAG_BYTES);
}

/** What source_counters stores to tell which key a counter belongs to: a keyed function of the key (signing.md, "A
 * counter belongs to a key"), so the spool says nothing about the key itself. */
export function keyFingerprint(key) {
  return createHmac('sha256', key).update(FINGERPRINT_MESSAGE, 'ascii').digest().subarray(0, 8).toString('hex');
}

export class Verifier {
  /**
   * counters: Map source → last accepted counter, fingerprints: Map source → the key fingerprint stored with it
   * (missing or '': a row written before fingerprints), as the spool holds them.
   */
  constructor(policy, counters, fingerprints = new Map()) {
    this.policy = policy;
    this.fingerprints = new Map([...policy.keys].map(([source, key]) => [source, keyFingerprint(key)]));
    this.counters = new Map(); // source → last accepted counter under its current key
    this.changed = new Map();
    this.rekeyed = []; // [source, old counter]: started afresh under a new key
    for (const [source, counter] of counters) {
      const old = fingerprints.get(source) ?? '';
      const current = this.fingerprints.get(source);
      if (current !== undefined && old !== '' && old !== current) {
        this.rekeyed.push([source, counter]);
        continue;
      }
      this.counters.set(source, counter);
      // A row from before fingerprints: bound to the key it runs with by the first commit.
      if (current !== undefined && old === '') this.changed.set(source, counter);
    }
    this.rekeyed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** null: accept the frame; else the reject reason. trusted: it came from a trusted input. An accepted signed
   * frame's counter becomes its source's. */
  verdict(frame, trusted = false) {
    if (frame.format !== 'signed') return this.policy.signsOnly(frame.source, trusted) ? 'unsigned' : null;
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

  /** The counters accepted since the last call, each [counter, key fingerprint]: the spool stores them with the
   * frames they came with. */
  takeChanged() {
    const { changed } = this;
    this.changed = new Map();
    return new Map([...changed].map(([source, counter]) => [source, [counter, this.fingerprints.get(source)]]));
  }
}
