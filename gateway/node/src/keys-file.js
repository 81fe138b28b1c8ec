// The keys file (PROTOCOL.md section 8.5): `<source> <32 hex digits>` per line. Its errors name the line number,
// never the line's text: a malformed line may hold a key.

import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';

import { isSourceName } from './protocol.js';

const LINE_RE = /^[ \t]*(\S+)[ \t]+([0-9A-Fa-f]{32})[ \t]*$/;

export class KeysFileError extends Error {
  /** rule: the config rule word (config.md, Errors): unreadable, syntax or distinct. */
  constructor(message, rule = 'syntax') {
    super(message);
    this.rule = rule;
  }
}

/** Map source → 16-byte Buffer; throws KeysFileError. */
export function parseKeys(text) {
  const keys = new Map();
  text.split(/\r\n|\n|\r/).forEach((line, index) => {
    const number = index + 1;
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const match = LINE_RE.exec(line);
    if (match === null || !isSourceName(match[1])) {
      throw new KeysFileError(`line ${number}: not \`<source> <32 hex digits>\``);
    }
    if (keys.has(match[1])) {
      throw new KeysFileError(`line ${number}: source ${match[1]} has a key on an earlier line`, 'distinct');
    }
    keys.set(match[1], Buffer.from(match[2], 'hex'));
  });
  return keys;
}

/** The keys of the file at path; KeysFileError when unreadable, readable by group or others, or malformed. */
export function readKeys(path) {
  let data;
  try {
    const fd = openSync(path, 'r');
    try {
      const mode = fstatSync(fd).mode & 0o777;
      if (mode & 0o077) {
        throw new KeysFileError(`mode ${mode.toString(8).padStart(4, '0')}: group or others may use it; chmod 600 it`,
          'unreadable');
      }
      data = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (error instanceof KeysFileError) throw error;
    throw new KeysFileError(error.code === 'ENOENT' ? 'No such file or directory' : error.message, 'unreadable');
  }
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    throw new KeysFileError('not UTF-8 text');
  }
  return parseKeys(text);
}
