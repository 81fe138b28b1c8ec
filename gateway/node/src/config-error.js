// A configuration error as gateway/contract/config.md defines it: the key path, the rule broken, a sentence.
//
// The key path and the rule word are the portable part (both gateways give the same for the same config, and the
// config vectors check them); the sentence and the origin are for the operator. Values in the sentence are
// written as Python's repr() writes them, so both gateways print the same line for the same mistake.

/** The rule words of config.md, in the order of its table. */
export const RULES = Object.freeze(['unreadable', 'toml_syntax', 'unknown_section', 'unknown_key', 'type', 'range',
  'choice', 'syntax', 'required', 'distinct', 'together', 'conflict']);

export class ConfigError extends Error {
  /**
   * @param {string} key dotted key path ('' for the file as a whole)
   * @param {string} rule one of RULES
   * @param {string} text the explanation
   * @param {string} [origin] where the value came from: 'in FILE', 'from TELEMETRY_…', 'from the command line'
   */
  constructor(key, rule, text, origin = '') {
    if (!RULES.includes(rule)) throw new TypeError(`not a config rule: ${rule}`);
    super(formatConfigError(key, rule, text, origin));
    this.name = 'ConfigError';
    this.key = key;
    this.rule = rule;
    this.text = text;
    this.origin = origin;
  }

  toString() {
    return this.message;
  }
}

function formatConfigError(key, rule, text, origin) {
  const where = key ? ` at ${key}` : '';
  return `config error${where} [${rule}]: ${text}${origin ? ` (${origin})` : ''}`;
}

/** A float as Python's repr() writes it: 10.0, 0.5, 1e+16, 1e-05, nan, inf. */
export function pyFloat(x) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  // toExponential() without digits gives the shortest digits that read back as x, as repr() does.
  const [mantissa, exponentText] = x.toExponential().split('e');
  const exponent = Number(exponentText);
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace(/^-/, '').replace('.', '');
  if (exponent < -4 || exponent >= 16) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const exponentSign = exponent < 0 ? '-' : '+';
    return `${sign}${digits[0]}${fraction}e${exponentSign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  return `${sign}${whole}.${digits.slice(exponent + 1) || '0'}`;
}

const NOT_PRINTABLE_RE = /[\p{C}\p{Z}]/u; // Python's str.isprintable(), but for the space

function pyString(text) {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of text) {
    const code = char.codePointAt(0);
    if (char === '\\' || char === quote) out += `\\${char}`;
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (char !== ' ' && NOT_PRINTABLE_RE.test(char)) {
      if (code <= 0xff) out += `\\x${code.toString(16).padStart(2, '0')}`;
      else if (code <= 0xffff) out += `\\u${code.toString(16).padStart(4, '0')}`;
      else out += `\\U${code.toString(16).padStart(8, '0')}`;
    } else out += char;
  }
  return out + quote;
}

/**
 * A parsed TOML value as Python's repr() writes it: 'text', True, 9042, 9042.5, nan, ['a', 1], {'path': 'x'}.
 * A TOML float with no fraction is written as a whole number: JavaScript cannot tell 9042.0 from 9042.
 */
export function pyRepr(value) {
  if (typeof value === 'string') return pyString(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pyFloat(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (value instanceof Date) return String(value.toISOString());
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${pyString(k)}: ${pyRepr(v)}`).join(', ')}}`;
  }
  return String(value);
}
