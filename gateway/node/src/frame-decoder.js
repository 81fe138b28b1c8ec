// The line decoder: v1 frames, status lines and legacy greenhouse JSON, PROTOCOL.md section 3 step by step (the
// step names F1, J3, ... are the spec's). Pure: one line of bytes in, a frame, status or reject out; never throws.

import { crc16CcittFalse } from './crc16.js';
import { frame, reject, status } from './decoded.js';
import { KEY_RE, MAX_LINE_BYTES, SEQ_MODULUS, SEQ_RE, SOURCE_RE, TIME_RE, VALUE_RE } from './protocol.js';
import { readJsonObject } from './legacy-json.js';

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const FRAME_RE = /^\$([^*]*)\*([0-9A-F]{4})$/;
const VERSION_RE = /^T[0-9]+$/;
const LEGACY_RESERVED = new Set(['source', 'destination', 'action']);

function isBlank(byte) {
  return byte === SPACE || byte === TAB;
}

/** The length of `bytes` without one trailing \n, then one trailing \r (step 1). */
export function contentLength(bytes) {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === LF) end--;
  if (end > 0 && bytes[end - 1] === CR) end--;
  return end;
}

function asBuffer(bytes) {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes one line (a Buffer or Uint8Array, its ending included or not). */
export function decodeLine(bytes) {
  const line = asBuffer(bytes).subarray(0, contentLength(bytes)); // 1
  if (line.length > MAX_LINE_BYTES) return reject('too_long'); // 2
  let start = 0;
  let end = line.length;
  while (start < end && isBlank(line[start])) start++;
  if (start === end) return reject('empty'); // 3
  if (line[0] === 0x23) { // 4: '#'
    start = 1;
    while (start < end && isBlank(line[start])) start++;
    while (end > start && isBlank(line[end - 1])) end--;
    return status(line.toString('latin1', start, end));
  }
  const dollar = line.lastIndexOf(0x24); // 5: '$'
  if (dollar >= 0) return decodeV1(line.toString('latin1', dollar));
  if (line[start] === 0x7b) return decodeLegacy(line); // 6: '{'
  return reject('no_frame'); // 7
}

/** F1-F6 on the text from the last '$' to the end of the line (one character per byte). */
function decodeV1(text) {
  const match = FRAME_RE.exec(text);
  if (match === null) return reject('bad_syntax'); // F1
  const [, body, crc] = match;
  if (crc16CcittFalse(body) !== parseInt(crc, 16)) return reject('bad_crc'); // F2
  const fields = body.split(',');
  if (fields.length < 3) return reject('bad_syntax'); // F3
  const [version, source, seqText] = fields;
  if (version !== 'T1') return reject(VERSION_RE.test(version) ? 'bad_version' : 'bad_syntax');
  if (!SOURCE_RE.test(source)) return reject('bad_source'); // F4
  if (!SEQ_RE.test(seqText)) return reject('bad_seq');
  const seq = Number(seqText);
  if (seq >= SEQ_MODULUS) return reject('bad_seq');

  const seen = new Set();
  const values = [];
  let t = null;
  for (let i = 3; i < fields.length; i++) { // F5
    const field = fields[i];
    const eq = field.indexOf('=');
    if (eq < 0) return reject('bad_syntax');
    const key = field.slice(0, eq);
    const value = field.slice(eq + 1);
    if (!KEY_RE.test(key)) return reject('bad_key');
    if (seen.has(key)) return reject('duplicate_key');
    seen.add(key);
    if (key === 't') {
      if (!TIME_RE.test(value)) return reject('bad_time');
      t = Number(value); // at most 15 digits: an exact integer as a double
    } else if (VALUE_RE.test(value)) {
      values.push([key, Number(value)]);
    } else {
      return reject('bad_value');
    }
  }
  if (values.length === 0) return reject('no_values'); // F6
  return frame('v1', source, seq, t, values);
}

/** J1-J5 on the whole line (its ending removed). */
function decodeLegacy(line) {
  const read = readJsonObject(line); // J1
  if (read.reason !== undefined) return reject(read.reason);
  const { members } = read;
  const named = (name) => members.find(([member]) => member === name)?.[1];
  const source = named('source');
  if (typeof source !== 'string' || !SOURCE_RE.test(source)) return reject('bad_source'); // J2
  if (named('destination') !== 'C') return reject('wrong_destination'); // J3
  const values = [];
  for (const [name, value] of members) { // J4
    if (LEGACY_RESERVED.has(name) || typeof value !== 'number') continue;
    if (name === 't' || !KEY_RE.test(name)) return reject('bad_key');
    if (!Number.isFinite(value)) return reject('bad_value');
    values.push([name, value]);
  }
  if (values.length === 0) return reject('no_values'); // J5
  return frame('legacy', source, null, null, values);
}
