// The room board's CSV lines (PROTOCOL.md section 7): `light,temperature` as Arduino prints them, read from a
// port configured with format = "csv", its source and its column names. Pure: bytes in, a frame or a reject out,
// never throws. The line carries no source, seq or time: the frame has the port's source, no seq and no t.

import { frame, reject } from './decoded.js';
import { contentLength, decodeLine } from './frame-decoder.js';
import { MAX_LINE_BYTES } from './protocol.js';

// What Arduino's print(float) and dtostrf() write: an optional sign, digits, an optional fraction.
const NUMBER_RE = /^[+-]?[0-9]+(?:\.[0-9]+)?$/;
const BLANK_ENDS_RE = /^[ \t]+|[ \t]+$/g; // dtostrf pads to its width with spaces; nothing else is trimmed

/** Decodes one line (Buffer or Uint8Array) of a CSV port with `source` and `columns` (metric names). */
export function decodeCsvLine(bytes, source, columns) {
  const length = contentLength(bytes); // 1
  if (length > MAX_LINE_BYTES) return reject('too_long'); // 2
  const fields = Buffer.from(bytes.buffer, bytes.byteOffset, length).toString('latin1').split(',');
  if (fields.length !== columns.length) return reject('csv_column_count'); // 3
  const values = [];
  for (let i = 0; i < fields.length; i++) { // 4
    const text = fields[i].replace(BLANK_ENDS_RE, '');
    if (text === '') return reject('csv_empty_field');
    if (!NUMBER_RE.test(text)) return reject('csv_bad_number'); // also nan, inf, ovf, exponents, ".5"
    const number = Number(text);
    if (!Number.isFinite(number)) return reject('csv_bad_number'); // not within 200 bytes; no inf is stored
    values.push([columns[i], number]);
  }
  return frame('csv', source, null, null, values);
}

/** How a port's lines are decoded: CSV only when its config says so, else the frame decoder. */
export function lineDecoder(port) {
  if (port.format === 'csv') return (line) => decodeCsvLine(line, port.source, port.columns);
  return decodeLine;
}
