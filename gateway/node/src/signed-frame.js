// T2 frames: a radio node's version-2 payload, forwarded by the base station as hex (PROTOCOL.md section 3, steps
// S1-S5, and section 6). The decoder only reads the payload; whether its tag is right is the verifier's question
// (signing.js), since that needs the keys and the last counters. Pure; never throws.

import { contractNumber } from './contract-constants.js';

const PAYLOAD_VERSION = contractNumber('signed_payload_version');
const HEADER_BYTES = contractNumber('signed_header_bytes'); // version, node id, seq, counter, vbat, send failures
const TAG_BYTES = contractNumber('signed_tag_bytes');
const METRIC_BYTES = contractNumber('signed_metric_bytes');
const MAX_METRICS = contractNumber('signed_metrics_max');
const HEX_RE = /^(?:[0-9A-F]{2})+$/;
/** Metric id → [frame key, divisor]: PROTOCOL.md section 6.3. An id not listed is left out (section 6.4). */
const METRIC_IDS = new Map([
  [1, ['temp_in', 100]], [2, ['temp_out', 100]], [3, ['temp_check', 100]], [4, ['humidity', 10]],
  [5, ['light', 1]], [6, ['temp', 100]],
]);

/**
 * S2-S5 on a T2 line's source and payload fields (strings, one character per byte): {source, seq, values,
 * counter, signed, tag} (signed and tag as uppercase hex, as the line carries them), or a reject reason.
 */
export function decodePayload(source, payloadHex) {
  if (!HEX_RE.test(payloadHex)) return 'bad_syntax';
  const payload = Buffer.from(payloadHex, 'hex');
  const count = (payload.length - HEADER_BYTES - TAG_BYTES) / METRIC_BYTES;
  if (!Number.isInteger(count) || count < 0 || count > MAX_METRICS) return 'bad_payload';
  const node = payload[1];
  if (payload[0] !== PAYLOAD_VERSION || node === 0 || node === 255) return 'bad_payload';
  if (source !== `node${node}`) return 'bad_source';
  const values = [];
  const seen = new Set();
  for (let offset = HEADER_BYTES; offset < HEADER_BYTES + METRIC_BYTES * count; offset += METRIC_BYTES) {
    const id = payload[offset];
    if (id === 0) return 'bad_payload';
    if (seen.has(id)) return 'duplicate_key';
    seen.add(id);
    const known = METRIC_IDS.get(id);
    // A division, not a product with 0.01: it rounds once, to the double the T1 text would give.
    if (known !== undefined) values.push([known[0], payload.readInt16LE(offset + 1) / known[1]]);
  }
  const vbatMv = payload.readUInt16LE(8);
  if (vbatMv !== 0) values.push(['vbat', vbatMv / 1000]);
  if (values.length === 0) return 'no_values';
  const end = 2 * (payload.length - TAG_BYTES);
  return {
    source, seq: payload.readUInt16LE(2), values, counter: payload.readUInt32LE(4),
    signed: payloadHex.slice(0, end), tag: payloadHex.slice(end),
  };
}
