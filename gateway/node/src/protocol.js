// The protocol's constants and name rules (firmware/protocol/PROTOCOL.md sections 1, 4 and 7).

export const MAX_LINE_BYTES = 200;
export const SEQ_MODULUS = 65536;

/** The reasons decodeLine gives (decode.json covers every one). */
export const DECODE_REJECT_REASONS = Object.freeze([
  'too_long', 'empty', 'no_frame', 'bad_syntax', 'bad_crc', 'bad_version', 'bad_source', 'bad_seq',
  'bad_key', 'duplicate_key', 'bad_value', 'bad_time', 'no_values', 'bad_json', 'wrong_destination', 'bad_payload',
]);
/** A CSV port's lines (section 7); an over-long one is too_long like any line. */
export const CSV_REJECT_REASONS = Object.freeze(['csv_column_count', 'csv_empty_field', 'csv_bad_number']);

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
