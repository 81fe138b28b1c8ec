// The line decoder: v1 and signed (T2) frames, status lines and legacy greenhouse JSON, PROTOCOL.md section 3 step by step (the
// step names F1, J3, ... are the spec's). Pure: one line of bytes in, a frame, status or reject out; never throws.

import { crc16CcittFalse } from './crc16.js';
import { frame, reject, signedFrame, status } from './decoded.js';
import { KEY_RE, MAX_LINE_BYTES, SEQ_MODULUS, SEQ_RE, SOURCE_RE, TIME_RE, VALUE_RE } from './protocol.js';
import { readJsonObject } from './legacy-json.js';
import { decodePayload } from './signed-frame.js';

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
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

/** 4 uppercase hex digits at text[at, at + 4). */
function isCrcHex(text, at) {
  for (let i = at; i < at + 4; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46))) return false;
  }
  return true;
}

/** Whether values already has metric key. */
function hasKey(values, key) {
  for (let i = 0; i < values.length; i++) if (values[i][0] === key) return true;
  return false;
}

/**
 * F1-F6 on the text from the last '$' to the end of the line (one character per byte). Walks the text with
 * indexOf rather than a regular expression and split(): decoding is the ingest's largest allocator.
 */
function decodeV1(text) {
  // F1: '$', a body without '*', '*', 4 uppercase hex digits, the end
  const star = text.length - 5;
  if (star < 1 || text.indexOf('*', 1) !== star || !isCrcHex(text, star + 1)) return reject('bad_syntax');
  const body = text.slice(1, star);
  if (crc16CcittFalse(body) !== parseInt(text.slice(star + 1), 16)) return reject('bad_crc'); // F2
  const afterVersion = body.indexOf(',');
  const afterSource = afterVersion < 0 ? -1 : body.indexOf(',', afterVersion + 1);
  if (afterSource < 0) return reject('bad_syntax'); // F3: fewer than 3 fields
  const version = body.slice(0, afterVersion);
  if (version === 'T2') return decodeSigned(body, afterVersion, afterSource);
  if (version !== 'T1') return reject(VERSION_RE.test(version) ? 'bad_version' : 'bad_syntax');
  const source = body.slice(afterVersion + 1, afterSource);
  if (!SOURCE_RE.test(source)) return reject('bad_source'); // F4
  let end = body.indexOf(',', afterSource + 1);
  if (end < 0) end = body.length;
  const seqText = body.slice(afterSource + 1, end);
  if (!SEQ_RE.test(seqText)) return reject('bad_seq');
  const seq = Number(seqText);
  if (seq >= SEQ_MODULUS) return reject('bad_seq');

  const values = [];
  let t = null;
  while (end < body.length) { // F5: each field after the seq is key=value
    const start = end + 1;
    end = body.indexOf(',', start);
    if (end < 0) end = body.length;
    const eq = body.indexOf('=', start);
    if (eq < 0 || eq >= end) return reject('bad_syntax');
    const key = body.slice(start, eq);
    const value = body.slice(eq + 1, end);
    if (!KEY_RE.test(key)) return reject('bad_key');
    if (key === 't') {
      if (t !== null) return reject('duplicate_key');
      if (!TIME_RE.test(value)) return reject('bad_time');
      t = Number(value); // at most 15 digits: an exact integer as a double
    } else if (hasKey(values, key)) {
      return reject('duplicate_key');
    } else if (VALUE_RE.test(value)) {
      values.push([key, Number(value)]);
    } else {
      return reject('bad_value');
    }
  }
  if (values.length === 0) return reject('no_values'); // F6
  return frame('v1', source, seq, t, values);
}

/** S1-S5: T2, the source, the payload as hex. */
function decodeSigned(body, afterVersion, afterSource) {
  if (body.indexOf(',', afterSource + 1) >= 0) return reject('bad_syntax'); // S1: exactly 3 fields
  const source = body.slice(afterVersion + 1, afterSource);
  if (!SOURCE_RE.test(source)) return reject('bad_source');
  const payload = decodePayload(source, body.slice(afterSource + 1));
  return typeof payload === 'string' ? reject(payload) : signedFrame(payload);
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
