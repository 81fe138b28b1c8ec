// The checksum of a frame row (gateway/contract/spool.md, "Row checksums"): CRC-32 as zlib computes it, over the
// row's columns but its id, stored as a signed 32-bit integer so that SQLite keeps it in 4 bytes.
//
// Computed here with a table, not with node:zlib's crc32: that needs the row's bytes in one Buffer first, and the
// native calls to assemble and checksum them (about ten per frame) tripled the time of a commit and of a take per
// frame; this loop runs over the columns as they are. The tests check it against node:zlib's crc32.

const TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  TABLE[n] = c;
}
const TWO_32 = 2 ** 32;
const ZERO = Buffer.alloc(1);

function addBytes(crc, bytes) {
  for (let i = 0; i < bytes.length; i++) crc = TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return crc;
}

/** Text as a string (its UTF-8 bytes) or as the bytes read. */
function addText(crc, text) {
  if (typeof text !== 'string') return addBytes(crc, text);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) return addBytes(crc, Buffer.from(text.slice(i))); // the rest, as UTF-8
    crc = TABLE[(crc ^ code) & 0xff] ^ (crc >>> 8);
  }
  return crc;
}

/** v (an integer within ±2^53) as 8 bytes big-endian, two's complement. */
function addInt64(crc, v) {
  const high = Math.floor(v / TWO_32);
  const low = v - high * TWO_32;
  for (let shift = 24; shift >= 0; shift -= 8) crc = TABLE[(crc ^ (high >> shift)) & 0xff] ^ (crc >>> 8);
  for (let shift = 24; shift >= 0; shift -= 8) crc = TABLE[(crc ^ (low >>> shift)) & 0xff] ^ (crc >>> 8);
  return crc;
}

/** The bytes checksummed: source, 0, ts_ms and received_ms (8 bytes big-endian each), metrics, 0, vals. */
export function crcBytes(source, tsMs, receivedMs, metrics, vals) {
  const times = Buffer.alloc(16);
  times.writeBigInt64BE(BigInt(tsMs), 0);
  times.writeBigInt64BE(BigInt(receivedMs), 8);
  return Buffer.concat([Buffer.from(source), ZERO, times, Buffer.from(metrics), ZERO, vals]);
}

export function frameCrc(source, tsMs, receivedMs, metrics, vals) {
  let crc = addText(-1, source);
  crc = TABLE[crc & 0xff] ^ (crc >>> 8); // the 0 byte
  crc = addInt64(addInt64(crc, tsMs), receivedMs);
  crc = addText(crc, metrics);
  crc = TABLE[crc & 0xff] ^ (crc >>> 8);
  return ~addBytes(crc, vals); // ~ of an int32: the final XOR, already signed
}

/** Whether a row's stored crc vouches for its columns: null (written before checksums) passes unchecked. */
export function crcMatches(crc, source, tsMs, receivedMs, metrics, vals) {
  if (crc === null) return true;
  if (!Number.isInteger(crc) || !Buffer.isBuffer(vals) || !Number.isSafeInteger(tsMs)
    || !Number.isSafeInteger(receivedMs) || !isText(source) || !isText(metrics)) return false;
  return crc === frameCrc(source, tsMs, receivedMs, metrics, vals);
}

const isText = (value) => typeof value === 'string' || Buffer.isBuffer(value);
