// How values are written as text in log fields and in `decode`'s output (gateway/contract/logs.md, "Values").

const NAMED = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A JSON string of ASCII only: every control character, DEL and non-ASCII UTF-16 code unit escaped. */
export function quoted(text) {
  return `"${text.replace(/["\\\x00-\x1f\x7f-\uffff]/g,
    (c) => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

/** The shortest decimal that reads back as the same double; an exponent only below 1e-6 and from 1e21 on. */
export function numberText(x) {
  return Object.is(x, -0) ? '-0.0' : String(x); // "-0" reads back as an integer 0 in some readers
}

const PLAIN_RE = /^[\x21-\x7e]+$/;
const NOT_PLAIN_RE = /["=\\]/;

/** A log field's value as written; null: the field is left out (an absent value). */
export function fieldText(value) {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return numberText(value);
  if (typeof value === 'bigint') return value.toString();
  const text = String(value);
  return PLAIN_RE.test(text) && !NOT_PLAIN_RE.test(text) ? text : quoted(text);
}
