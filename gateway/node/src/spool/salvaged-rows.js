// Each row read from a damaged spool checked against the spool's schema (gateway/contract/spool.md, "A damaged
// spool"): a damaged cell can hold another type, a broken text or a value out of range; such a row is not kept.
// Integers are read as BigInts: a damaged cell can hold any 64-bit value.

import { crcMatches } from './row-check.js';

const METRICS_RE = /^[a-z][a-z0-9_]{0,15}(,[a-z][a-z0-9_]{0,15})*$/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const FINGERPRINT_RE = /^([0-9a-f]{16})?$/;

/** A text cell (read as bytes) as text: non-empty UTF-8 without control characters, else null. */
function text(bytes) {
  if (!Buffer.isBuffer(bytes) || bytes.length === 0) return null;
  let decoded;
  try {
    decoded = UTF8.decode(bytes);
  } catch {
    return null;
  }
  return /[\u0000-\u001f\u007f]/.test(decoded) ? null : decoded;
}

const isInt = (value) => typeof value === 'bigint';
const safe = (value) => value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER);

/** [id, source, ts_ms, received_ms, metrics, vals, crc]; a row of a file older than format 6 has no crc: null. */
function validFrame(row) {
  const [id, sourceBytes, tsMs, receivedMs, metricsBytes, vals, stored, types] = row.length === 7
    ? [...row.slice(0, 6), null, row[6]] : row;
  const source = text(sourceBytes);
  const metrics = text(metricsBytes);
  if (types !== 'texttextblob' || !isInt(id) || id <= 0n || !safe(id) || !source || !isInt(tsMs) || !safe(tsMs)
    || !isInt(receivedMs) || !safe(receivedMs) || !metrics || !METRICS_RE.test(metrics)
    || vals.length !== 8 * metrics.split(',').length || !(stored === null || isInt(stored))) return null;
  const crc = stored === null ? null : Number(stored);
  if (!crcMatches(crc, sourceBytes, Number(tsMs), Number(receivedMs), metricsBytes, vals)) return null;
  return [Number(id), source, Number(tsMs), Number(receivedMs), metrics, vals, crc];
}

function validPair(row) {
  const source = text(row[0]);
  const values = row.slice(1, -1);
  const ok = row.at(-1) === 'text' && source
    && values.every((value) => isInt(value) && (safe(value) || safe(-value)));
  return ok ? [source, ...values.map(Number)] : null;
}

/** [source, counter, key fingerprint]; a format 4 row has none: ''. */
function validCounter(row) {
  const [sourceBytes, counter, fingerprintBytes, types] = row.length === 3
    ? [row[0], row[1], Buffer.alloc(0), `${row[2]}text`] : row;
  const source = text(sourceBytes);
  if (types !== 'texttext' || !source || !isInt(counter) || !(safe(counter) || safe(-counter))) return null;
  const fingerprint = Buffer.isBuffer(fingerprintBytes) ? fingerprintBytes.toString('latin1') : null;
  return fingerprint !== null && FINGERPRINT_RE.test(fingerprint) ? [source, Number(counter), fingerprint] : null;
}

// Each returns the row with its text decoded, or null for a row that cannot be an intact one.
export const VALIDATORS = {
  frames: validFrame, receipt_stamps: validPair, source_seqs: validPair, source_counters: validCounter,
};
