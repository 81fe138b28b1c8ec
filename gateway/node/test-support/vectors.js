// Where the shared vectors live and how to read them (gateway/contract/README.md, "Vector files").

import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const PROTOCOL_VECTORS = process.env.TELEMETRY_PROTOCOL_VECTORS ?? `${REPO}firmware/protocol/vectors/`;
export const CONTRACT_VECTORS = process.env.TELEMETRY_CONTRACT_VECTORS ?? `${REPO}gateway/contract/vectors/`;

/** A protocol vector file: one JSON document with `cases` (and shared fields). */
export function protocolVectors(name) {
  return JSON.parse(readFileSync(`${PROTOCOL_VECTORS}${name}`, 'ascii'));
}

/** A contract vector file: JSON lines, one case each. */
export function contractVectors(name) {
  return readFileSync(`${CONTRACT_VECTORS}${name}`, 'ascii').split('\n').filter((line) => line.trim())
    .map((line) => JSON.parse(line));
}

export function contractVectorFiles() {
  return readdirSync(CONTRACT_VECTORS).filter((name) => name.endsWith('.jsonl')).sort();
}

/** Bytes in JSON: one byte per character U+0000-U+00FF (latin-1, never UTF-8). */
export function latin1(text) {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0xff) throw new Error(`not a byte string: ${JSON.stringify(text)}`);
  }
  return Buffer.from(text, 'latin1');
}
