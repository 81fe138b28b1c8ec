// telemetry-gateway-node decode: what the gateway makes of some lines, one JSON object per line. An operator's
// tool ("why is this board's data not stored?") and the common ground of the two gateways in the differential
// test, which feeds both the same lines and compares what they print. Input lines and the output text:
// gateway/contract/process.md, "decode". With a keys file each frame also gets its verdict (decode-verdicts.js);
// --port reads a serial port instead of stdin (decode-port.js).

import { once } from 'node:events';
import { parseArgs } from 'node:util';

import { loadConfig } from './config.js';
import { ConfigError } from './config-error.js';
import { DecodeJudge } from './decode-verdicts.js';
import { isMetricKey, isSourceName } from './protocol.js';
import { lineDecoder } from './room-csv.js';
import { loadSigningPolicy } from './signing-config.js';
import { numberText, quoted } from './text-forms.js';

const GATEWAY = 'telemetry-gateway-node';
const PROG = `${GATEWAY} decode`;
const LF = 0x0a;
const CR = 0x0d;
const EMPTY = Buffer.alloc(0);
const STDIN_PATH = '-'; // the port's path: none, the lines come from stdin
const OPTIONS = {
  csv: { type: 'boolean' },
  source: { type: 'string' },
  columns: { type: 'string' },
  keys: { type: 'string' },
  config: { type: 'string' },
  port: { type: 'string' },
  count: { type: 'string' },
  seconds: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};
const USAGE = `Usage: ${PROG} [--csv --source SOURCE --columns NAME,NAME...] [--keys FILE] [--config FILE]
       [--port PATH[@BAUD] [--count N] [--seconds S]]

Decode lines from stdin (or a serial port: --port) as the gateway does; one JSON object per line on stdout (a
frame, a status line or a reject with its reason), a frame with its verdict when a keys file is given (--keys, or
--config's [signing]). Writes nothing to disk.

Options:
  -h, --help               this help
  --csv                    the lines of a room board's CSV port (format = "csv"); needs --source and --columns
  --source SOURCE          csv: the source the lines are stored under
  --columns NAME,NAME...   csv: the metric of each field, in line order
  --keys FILE              keys file: each frame's verdict (accepted, bad_mac, replay, unsigned), counters of this
                           run only
  --config FILE            TOML config: its [signing] keys and settings (and serial.baud)
  --port PATH[@BAUD]       read this serial port instead of stdin, until it goes away, Ctrl-C, --count or
                           --seconds; a summary line on stderr at the end
  --count N                --port: stop after N lines
  --seconds S              --port: stop after S seconds (a decimal number)
`;
const READING = { count: [/^[0-9]+$/, 'a whole number'], seconds: [/^[0-9]+(\.[0-9]+)?$/, 'a decimal number'] };

/** --count and --seconds: with --port only, and above 0. Resolves to {count, seconds} (numbers) or {error}. */
function readingFrom(options) {
  const reading = {};
  for (const [name, [form, what]] of Object.entries(READING)) {
    const text = options[name];
    if (text === undefined) continue;
    if (options.port === undefined) return { error: `--${name}: only with --port` };
    if (!form.test(text) || !(Number(text) > 0)) {
      return { error: `--${name}: must be ${what} above 0, not ${quoted(text)}` };
    }
    reading[name] = Number(text);
  }
  return { reading };
}

/**
 * The judge of --keys/--config and the --port to read (or null): the config read as process.md says (its file only
 * from --config); throws ConfigError.
 */
function judgeFrom(options) {
  if (options.config === undefined && options.keys === undefined && options.port === undefined) {
    return { judge: new DecodeJudge(null), serialPort: null };
  }
  const overrides = {};
  if (options.keys !== undefined) overrides.signing = { keys_file: options.keys };
  if (options.port !== undefined) overrides.serial = { ports: [options.port] };
  const config = loadConfig(options.config ?? null, overrides);
  const policy = loadSigningPolicy(config);
  const keyed = Boolean(config.signing.keys_file || config.signing.keys_credential);
  return { judge: new DecodeJudge(keyed ? policy : null),
    serialPort: options.port === undefined ? null : config.serial.ports[0] };
}

/**
 * The port whose decoder reads the lines, checked as the config checks a port table: {port} or {error} (the
 * message).
 */
export function portFrom({ csv = false, source, columns }) {
  if (!csv) {
    if (source !== undefined) return { error: '--source: only a --csv port has source' };
    if (columns !== undefined) return { error: '--columns: only a --csv port has columns' };
    return { port: { path: STDIN_PATH, format: 'auto' } };
  }
  if (source === undefined) return { error: '--source: a csv port needs the source its lines are stored under' };
  if (!isSourceName(source)) {
    return { error: `--source: ${quoted(source)} is not a source name ([A-Za-z0-9_-]{1,32})` };
  }
  if (columns === undefined) return { error: '--columns: a csv port needs the metric name of each field' };
  const names = columns.split(',').map((column) => column.trim());
  for (let i = 0; i < names.length; i++) {
    if (!isMetricKey(names[i])) {
      return { error: `--columns: ${quoted(names[i])} is not a metric name ([a-z][a-z0-9_]{0,15}, not t)` };
    }
    if (names.indexOf(names[i]) < i) return { error: `--columns: ${quoted(names[i])} is listed twice` };
  }
  return { port: { path: STDIN_PATH, format: 'csv', source, columns: names } };
}

function jsonInteger(n) {
  return n === null ? 'null' : String(n); // seq and t: whole numbers of at most 15 digits
}

/** One decoder result as the vectors' `expect`, in compact JSON, keys in this order; a frame's verdict last. */
function decodedJson(decoded, verdict = null) {
  switch (decoded.kind) {
    case 'frame': {
      const { format, source, seq, t } = decoded;
      const values = decoded.values.map(([metric, value]) => `[${quoted(metric)},${numberText(value)}]`);
      const signature = decoded.counter === undefined ? ''
        : `,"counter":${decoded.counter},"signed":"${decoded.signed}","tag":"${decoded.tag}"`;
      const judged = verdict === null ? '' : `,"verdict":"${verdict}"`;
      return `{"kind":"frame","format":${quoted(format)},"source":${quoted(source)},`
        + `"seq":${jsonInteger(seq)},"t":${jsonInteger(t)},"values":[${values.join(',')}]${signature}${judged}}`;
    }
    case 'status':
      return `{"kind":"status","text":${quoted(decoded.text)}}`;
    default:
      return `{"kind":"reject","reason":${quoted(decoded.reason)}}`;
  }
}

function withoutCr(line) {
  return line.length > 0 && line[line.length - 1] === CR ? line.subarray(0, line.length - 1) : line;
}

/** Splits a byte stream at LF into lines without their ending (the LF and one CR before it). */
export class LfLines {
  constructor() {
    this.partial = EMPTY; // the start of a line an earlier chunk left unfinished
  }

  /** One chunk (a Buffer) → the lines it completed. */
  feed(chunk) {
    const lines = [];
    let start = 0;
    for (let end = chunk.indexOf(LF); end >= 0; end = chunk.indexOf(LF, start)) {
      const piece = chunk.subarray(start, end);
      lines.push(withoutCr(this.partial.length ? Buffer.concat([this.partial, piece]) : piece));
      this.partial = EMPTY;
      start = end + 1;
    }
    if (start < chunk.length) this.partial = Buffer.concat([this.partial, chunk.subarray(start)]);
    return lines;
  }

  /** The input ended: an unfinished last line is a line. */
  end() {
    const rest = this.partial;
    this.partial = EMPTY;
    return rest.length ? [withoutCr(rest)] : [];
  }
}

/**
 * `telemetry-gateway-node decode [options]`. Resolves to the exit code: 0, 2 for a usage or config error, 1 when
 * stdout went away or the port did not open. stdin, stdout and stderr default to the process's (tests pass
 * streams).
 */
export async function decodeCommand(argv, { stdin = process.stdin, stdout = process.stdout,
  stderr = process.stderr } = {}) {
  let options;
  try {
    ({ values: options } = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (error) {
    stderr.write(`${PROG}: ${error.message} (${PROG} --help)\n`);
    return 2;
  }
  if (options.help) {
    stdout.write(USAGE);
    return 0;
  }
  const { port, error } = portFrom(options);
  const { reading, error: readingError } = readingFrom(options);
  if (error !== undefined || readingError !== undefined) {
    stderr.write(`${PROG}: ${error ?? readingError}\n`);
    return 2;
  }
  let judged;
  try {
    judged = judgeFrom(options);
  } catch (failure) {
    if (!(failure instanceof ConfigError)) throw failure;
    stderr.write(`${GATEWAY}: ${failure.message}\n`);
    return 2;
  }
  const { judge, serialPort } = judged;
  const decode = lineDecoder(port);
  if (serialPort !== null) return decodePort(serialPort, decode, judge, reading, { stdout, stderr });
  const lines = new LfLines();
  const texts = (completed) => completed.map((line) => {
    const decoded = decode(line);
    return `${decodedJson(decoded, judge.judge(decoded))}\n`;
  }).join('');
  let broken = false; // EPIPE and the like: the reader left (`| head`)
  const onError = () => { broken = true; };
  stdout.on('error', onError);
  try {
    // One write per chunk read: buffered, yet a line typed at a terminal is answered at once.
    for await (const chunk of stdin) {
      const text = texts(lines.feed(chunk));
      if (text && !stdout.write(text)) await once(stdout, 'drain');
      if (broken) return 1;
    }
    const text = texts(lines.end());
    if (text && !stdout.write(text)) await once(stdout, 'drain');
  } catch (failure) {
    if (broken || failure?.code === 'EPIPE') return 1;
    throw failure;
  } finally {
    stdout.off('error', onError);
  }
  return broken ? 1 : 0;
}

class StdoutClosed extends Error {}

async function decodePort({ path, baud }, decode, judge, reading, { stdout, stderr }) {
  const { PortUnavailable, readPort } = await import('./decode-port.js'); // the serial binding: only for --port
  let broken = false; // EPIPE and the like: the reader left
  const onError = () => { broken = true; };
  stdout.on('error', onError);
  const writeResults = async (results) => {
    const text = results.map((decoded) => `${decodedJson(decoded, judge.judge(decoded))}\n`).join('');
    if (text && !stdout.write(text)) await once(stdout, 'drain');
    if (broken) throw new StdoutClosed();
  };
  let end;
  try {
    end = await readPort(path, baud, decode, judge, writeResults, reading);
  } catch (failure) {
    if (failure instanceof StdoutClosed || failure?.code === 'EPIPE') return 1;
    if (!(failure instanceof PortUnavailable)) throw failure;
    stderr.write(`${PROG}: --port: cannot open ${path}: ${failure.message}\n`);
    return 1;
  } finally {
    stdout.off('error', onError);
  }
  stderr.write(`${PROG}: ${judge.summary(path, end)}\n`);
  return 0;
}
