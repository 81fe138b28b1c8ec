// The protocol's constants and name rules (firmware/protocol/PROTOCOL.md sections 1, 4 and 7).

import { contractNumber } from './contract-constants.js';

export const MAX_LINE_BYTES = contractNumber('line_bytes_max');
export const SEQ_MODULUS = contractNumber('seq_modulus');

export const SOURCE_RE = /^[A-Za-z0-9_-]{1,32}$/;
export const SEQ_RE = /^(?:0|[1-9][0-9]{0,4})$/;
export const KEY_RE = /^[a-z][a-z0-9_]{0,15}$/;
export const VALUE_RE = /^[+-]?[0-9]+(?:\.[0-9]+)?$/;
export const TIME_RE = /^(?:0|[1-9][0-9]{0,14})$/;

/** The source rule, for names given outside a line (a CSV port's source in the config). */
export function isSourceName(name) {
  return typeof name === 'string' && SOURCE_RE.test(name);
}

/** The key rule without the reserved `t`: a name a metric may have (a CSV port's column). */
export function isMetricKey(name) {
  return typeof name === 'string' && name !== 't' && KEY_RE.test(name);
}
