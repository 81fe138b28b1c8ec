// A strict JSON reader for the legacy greenhouse lines (PROTOCOL.md section 3, J1). JSON.parse cannot serve:
// it keeps the last of two members with one name, where the contract wants `duplicate_key`. This reader walks
// the text once: any syntax error gives `bad_json`; only a line that is valid JSON and has an object (nested ones
// too) holding a name twice gives `duplicate_key`. NaN/Infinity are not JSON here (bad_json). Every number is
// the double nearest its text, sign included: `-0` is -0, as in a T1 frame.

const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A nested object or array: present, never a metric. */
const NESTED = Object.freeze({ nested: true });

class Failure {
  constructor(reason) {
    this.reason = reason;
  }
}
const BAD_JSON = new Failure('bad_json');

class Reader {
  constructor(text) {
    this.text = text;
    this.pos = 0;
    this.repeated = false; // an object held a name twice: duplicate_key once the whole line proved valid JSON
  }

  skipBlank() {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) pos++;
      else break;
    }
    this.pos = pos;
  }

  literal(word, value) {
    if (!this.text.startsWith(word, this.pos)) throw BAD_JSON;
    this.pos += word.length;
    return value;
  }

  value() {
    switch (this.text.charCodeAt(this.pos)) {
      case 0x7b: return this.object(); // {
      case 0x5b: return this.array(); // [
      case 0x22: return this.string(); // "
      case 0x74: return this.literal('true', true);
      case 0x66: return this.literal('false', false);
      case 0x6e: return this.literal('null', null);
      default: return this.number();
    }
  }

  number() {
    NUMBER_RE.lastIndex = this.pos;
    const match = NUMBER_RE.exec(this.text);
    if (match === null) throw BAD_JSON;
    this.pos = NUMBER_RE.lastIndex;
    return Number(match[0]);
  }

  string() {
    const text = this.text;
    const start = this.pos;
    let pos = start + 1;
    for (;;) {
      if (pos >= text.length) throw BAD_JSON;
      const c = text.charCodeAt(pos);
      if (c === 0x22) break;
      if (c < 0x20) throw BAD_JSON; // control characters must be escaped
      if (c === 0x5c) {
        const escape = text[pos + 1];
        if (escape === 'u') {
          if (!/^[0-9A-Fa-f]{4}$/.test(text.slice(pos + 2, pos + 6))) throw BAD_JSON;
          pos += 6;
          continue;
        }
        if (escape === undefined || !'"\\/bfnrt'.includes(escape)) throw BAD_JSON;
        pos += 2;
        continue;
      }
      pos++;
    }
    this.pos = pos + 1;
    return JSON.parse(text.slice(start, pos + 1)); // checked above: decodes, never throws
  }

  array() {
    this.pos++;
    this.skipBlank();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return NESTED;
    }
    for (;;) {
      this.skipBlank();
      this.value();
      this.skipBlank();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 0x5d) return NESTED;
      if (c !== 0x2c) throw BAD_JSON;
    }
  }

  /** The members in document order, or NESTED for an object inside another. */
  object(top = false) {
    this.pos++;
    const members = [];
    this.skipBlank();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return top ? members : NESTED;
    }
    for (;;) {
      this.skipBlank();
      if (this.text.charCodeAt(this.pos) !== 0x22) throw BAD_JSON;
      const name = this.string();
      this.skipBlank();
      if (this.text.charCodeAt(this.pos++) !== 0x3a) throw BAD_JSON; // :
      this.skipBlank();
      members.push([name, this.value()]);
      this.skipBlank();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 0x7d) break;
      if (c !== 0x2c) throw BAD_JSON;
    }
    if (new Set(members.map(([name]) => name)).size !== members.length) this.repeated = true;
    return top ? members : NESTED;
  }
}

/**
 * Reads `bytes` (the line after its ending was removed) as one JSON object. Returns {members} — [[name, value]]
 * in document order, value a number, string, boolean, null or NESTED — or {reason}: bad_json or duplicate_key.
 */
export function readJsonObject(bytes) {
  let text;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return { reason: 'bad_json' };
  }
  const reader = new Reader(text);
  try {
    reader.skipBlank();
    if (text.charCodeAt(reader.pos) !== 0x7b) throw BAD_JSON;
    const members = reader.object(true);
    reader.skipBlank();
    if (reader.pos !== text.length) throw BAD_JSON;
    return reader.repeated ? { reason: 'duplicate_key' } : { members };
  } catch (error) {
    if (error instanceof Failure) return { reason: error.reason };
    throw error;
  }
}
