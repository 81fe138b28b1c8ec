// The checksum of a frame row (gateway/contract/spool.md, "Row checksums"): CRC-32 (zlib's, node:zlib's crc32) of
// the row's columns but its id, stored as a signed 32-bit integer so that SQLite keeps it in 4 bytes.

import { crc32 } from 'node:zlib';

const ZERO = Buffer.alloc(1);

/** The bytes checksummed: source, 0, ts_ms and received_ms (8 bytes big-endian each), metrics, 0, vals. Text as a
 * string (UTF-8) or as the bytes read. */
export function crcBytes(source, tsMs, receivedMs, metrics, vals) {
  const times = Buffer.alloc(16);
  times.writeBigInt64BE(BigInt(tsMs), 0);
  times.writeBigInt64BE(BigInt(receivedMs), 8);
  return Buffer.concat([Buffer.from(source), ZERO, times, Buffer.from(metrics), ZERO, vals]);
}

export function frameCrc(source, tsMs, receivedMs, metrics, vals) {
  return crc32(crcBytes(source, tsMs, receivedMs, metrics, vals)) | 0;
}

/** Whether a row's stored crc vouches for its columns: null (written before checksums) passes unchecked. */
export function crcMatches(crc, source, tsMs, receivedMs, metrics, vals) {
  if (crc === null) return true;
  if (!Number.isInteger(crc) || !Buffer.isBuffer(vals) || !Number.isInteger(tsMs) || !Number.isInteger(receivedMs)
    || typeof source !== typeof metrics || !['string', 'object'].includes(typeof source)) return false;
  try {
    return crc === frameCrc(source, tsMs, receivedMs, metrics, vals);
  } catch {
    return false; // a damaged cell: a number out of range, text of another type
  }
}
