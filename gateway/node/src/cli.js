// telemetry-gateway-node run | check: the flags, exit statuses and error lines of Python's telemetry-gateway
// (gateway/python/telemetry_gateway/cli.py). Usage errors exit 2, as argparse's do.

import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { ConfigError, loadConfig } from './config.js';

export const PROG = 'telemetry-gateway-node';
export const DEFAULT_CONFIG = '/etc/telemetry-gateway/config.toml';

// Flag → [section, key] of the config it overrides (config.md, "Where values come from").
const CONFIG_FLAGS = {
  port: ['serial', 'ports'],
  spool: ['spool', 'path'],
  hosts: ['cassandra', 'hosts'],
  keyspace: ['cassandra', 'keyspace'],
  'metrics-listen': ['metrics', 'listen'],
  'log-level': ['log', 'level'],
};
const COMMON_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  config: { type: 'string' },
  port: { type: 'string', multiple: true },
  spool: { type: 'string' },
  hosts: { type: 'string' },
  keyspace: { type: 'string' },
  'metrics-listen': { type: 'string' },
  'log-level': { type: 'string' },
};
const OPTIONS = {
  run: { ...COMMON_OPTIONS, input: { type: 'string', multiple: true }, 'exit-when-drained': { type: 'boolean' } },
  check: COMMON_OPTIONS,
};

// The help and usage texts argparse prints for Python's parser, but for the program's name.
const USAGE_PARTS = {
  run: ['[-h]', '[--config CONFIG]', '[--port PATH[@BAUD]]', '[--spool PATH]', '[--hosts HOSTS]',
    '[--keyspace KEYSPACE]', '[--metrics-listen HOST:PORT]', '[--log-level LOG_LEVEL]', '[--input FILE]',
    '[--exit-when-drained]'],
  check: ['[-h]', '[--config CONFIG]', '[--port PATH[@BAUD]]', '[--spool PATH]', '[--hosts HOSTS]',
    '[--keyspace KEYSPACE]', '[--metrics-listen HOST:PORT]', '[--log-level LOG_LEVEL]'],
};
const MAIN_USAGE = `usage: ${PROG} [-h] {run,check,decode} ...\n`;
const MAIN_HELP = `${MAIN_USAGE}
Serial telemetry frames into Cassandra.

positional arguments:
  {run,check,decode}
    run               read inputs, spool, write to Cassandra (the service)
    check             validate the config, connect, report the schema version
    decode            decode lines from stdin as the gateway would; one JSON
                      line each (\`decode --help\`)

options:
  -h, --help          show this help message and exit
`;
const COMMON_HELP = `
options:
  -h, --help            show this help message and exit
  --config CONFIG       TOML file (env TELEMETRY_CONFIG; default
                        ${DEFAULT_CONFIG} if it exists)
  --port PATH[@BAUD]    serial port, repeatable (replaces [serial] ports; a
                        csv port needs the config file)
  --spool PATH          spool file ([spool] path)
  --hosts HOSTS         Cassandra contact points, comma-separated ([cassandra]
                        hosts)
  --keyspace KEYSPACE   [cassandra] keyspace
  --metrics-listen HOST:PORT
                        [metrics] listen; "" turns it off
  --log-level LOG_LEVEL
                        [log] level
`;
const RUN_HELP = `  --input FILE          read a file ('-' = stdin) instead of or besides serial
                        ports; repeatable
  --exit-when-drained   with --input: exit once every line read is in
                        Cassandra (replays, benchmarks)
`;

/** argparse's usage line: the parts filled into lines of at most 78 characters, indented under the first. */
function usage(command) {
  const prefix = `usage: ${PROG} ${command} `;
  const lines = [[]];
  let length = prefix.length - 1;
  for (const part of USAGE_PARTS[command]) {
    if (length + 1 + part.length > 78 && lines.at(-1).length) {
      lines.push([]);
      length = prefix.length - 1;
    }
    lines.at(-1).push(part);
    length += part.length + 1;
  }
  return `${prefix}${lines.map((line) => line.join(' ')).join(`\n${' '.repeat(prefix.length)}`)}\n`;
}

function help(command) {
  return `${usage(command)}${COMMON_HELP}${command === 'run' ? RUN_HELP : ''}`;
}

/** A command line that argparse would refuse: usage and the error on stderr, exit 2. */
export class UsageError extends Error {
  constructor(command, message) {
    super(message);
    this.name = 'UsageError';
    this.usage = command ? usage(command) : MAIN_USAGE;
    this.prog = command ? `${PROG} ${command}` : PROG;
  }
}

/** argparse's unique-prefix flags: --conf is --config, --s is --spool; an ambiguous prefix is an error. */
function expandPrefixes(args, options, command) {
  const names = Object.keys(options);
  const expanded = [];
  for (const [index, arg] of args.entries()) {
    if (arg === '--') return [...expanded, ...args.slice(index)];
    const match = /^--([^=]+)(=.*)?$/s.exec(arg);
    if (match === null || names.includes(match[1])) {
      expanded.push(arg);
      continue;
    }
    const candidates = names.filter((name) => name.startsWith(match[1]));
    if (candidates.length > 1) {
      throw new UsageError(command, `ambiguous option: --${match[1]} could match ${
        candidates.map((name) => `--${name}`).join(', ')}`);
    }
    expanded.push(candidates.length === 1 ? `--${candidates[0]}${match[2] ?? ''}` : arg);
  }
  return expanded;
}

// What argparse takes for an option rather than a value: a dash and more, but for negative numbers and words
// with a space.
const OPTION_LIKE_RE = /^-(?!\d+$|\d*\.\d+$)[^ ]+$/;

/**
 * A subcommand's arguments → parseArgs' values, checked as argparse checks them, in order: a flag without its
 * value, a value given to a switch, -h (help at once); then every argument it does not know, in one error.
 * Returns null for -h.
 */
function parseCommandArgs(command, args, leftovers) {
  const options = OPTIONS[command];
  const expanded = expandPrefixes(args, options, command);
  const { tokens } = parseArgs({ args: expanded, options, strict: false, allowPositionals: true, tokens: true });
  const unknown = [...leftovers];
  const seen = new Set();
  for (const token of tokens) {
    const option = token.kind === 'option' ? options[token.name] : undefined;
    if (option === undefined) {
      if (!seen.has(token.index)) unknown.push(token.kind === 'option-terminator' ? '--' : expanded[token.index]);
      seen.add(token.index);
    } else if (token.name === 'help') {
      return null;
    } else if (option.type === 'string' && (token.value === undefined
        || (!token.inlineValue && OPTION_LIKE_RE.test(token.value)))) {
      throw new UsageError(command, `argument ${token.rawName}: expected one argument`);
    } else if (option.type === 'boolean' && token.value !== undefined) {
      throw new UsageError(command, `argument ${token.rawName}: ignored explicit argument '${token.value}'`);
    }
  }
  if (unknown.length) throw new UsageError(null, `unrecognized arguments: ${unknown.join(' ')}`);
  return parseArgs({ args: expanded, options, strict: false, allowPositionals: true }).values;
}

/**
 * The command line (without node and the script) → {command, options} with options as parseArgs gives them
 * ({config, port: [...], spool, hosts, keyspace, 'metrics-listen', 'log-level'; run: input: [...],
 * 'exit-when-drained'}), or {help: text} for -h; throws UsageError.
 */
export function parseCommandLine(argv) {
  // Before the command only -h is known; other dashed words wait to be reported as unrecognized, as argparse's.
  const leftovers = [];
  let at = 0;
  for (; at < argv.length && argv[at].startsWith('-') && argv[at] !== '-'; at++) {
    if (argv[at] === '-h' || argv[at] === '--help') return { help: MAIN_HELP };
    if (argv[at] === '--') {
      at++;
      break;
    }
    leftovers.push(argv[at]);
  }
  const command = argv[at];
  if (command === undefined) throw new UsageError(null, 'the following arguments are required: command');
  if (!Object.hasOwn(OPTIONS, command)) {
    throw new UsageError(null, `argument command: invalid choice: '${command}' (choose from 'run', 'check', 'decode')`);
  }
  const options = parseCommandArgs(command, argv.slice(at + 1), leftovers);
  return options === null ? { help: help(command) } : { command, options };
}

/** The config for these options: --config, else env TELEMETRY_CONFIG, else DEFAULT_CONFIG if it exists; flags
 * as overrides (Python's config_from). */
export function configFrom(options, env = process.env) {
  const path = options.config || env.TELEMETRY_CONFIG || (existsSync(DEFAULT_CONFIG) ? DEFAULT_CONFIG : null);
  const overrides = {};
  for (const [flag, [section, key]] of Object.entries(CONFIG_FLAGS)) {
    if (options[flag] !== undefined) (overrides[section] ??= {})[key] = options[flag];
  }
  return loadConfig(path, overrides, { env });
}

async function cmdRun(options, env) {
  const config = configFrom(options, env);
  const { setupLogging } = await import('./logs.js');
  setupLogging(config.log.level);
  const inputs = options.input ?? [];
  if (inputs.length === 0 && config.serial.ports.length === 0) {
    throw new ConfigError('serial.ports', 'required', 'nothing to read: give [serial] ports, --port or --input');
  }
  const { runGateway } = await import('./service.js');
  return runGateway(config, inputs, { exitWhenDrained: Boolean(options['exit-when-drained']) });
}

async function cmdCheck(options, io) {
  const config = configFrom(options, io.env);
  const { runCheck } = await import('./check.js');
  return runCheck(config, io);
}

/** An operating-system error (spool folder not creatable ...) or a spool from a newer version: exit 1. */
function isFatal(error) {
  return (typeof error?.code === 'string' && typeof error?.syscall === 'string') || error?.name === 'SpoolFormatError';
}

async function logFatal(error) {
  try {
    const { event } = await import('./logs.js');
    event('error', 'fatal', { error: error.message });
  } catch {
    // no log to write to: the line on stderr below says it
  }
}

/**
 * Runs a command line; resolves to the exit status. Errors that are not a usage, config, OS or spool-format
 * error are thrown (an uncaught error exits 1 with its stack, as Python's traceback does).
 * @param {string[]} argv the arguments after the script
 * @param {{stdout?: {write: Function}, stderr?: {write: Function}, env?: object}} [io]
 */
export async function main(argv, io = {}) {
  const { stdout = process.stdout, stderr = process.stderr, env = process.env } = io;
  if (argv[0] === 'decode') { // its own arguments, parsed by decode-command.js
    const { decodeCommand } = await import('./decode-command.js');
    return decodeCommand(argv.slice(1), { stdout, stderr });
  }
  let parsed;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    stderr.write(`${error.usage}${error.prog}: error: ${error.message}\n`);
    return 2;
  }
  if (parsed.help) {
    stdout.write(parsed.help);
    return 0;
  }
  try {
    if (parsed.command === 'run') return await cmdRun(parsed.options, env);
    return await cmdCheck(parsed.options, { stdout, stderr, env });
  } catch (error) {
    if (error instanceof ConfigError) {
      stderr.write(`${PROG}: ${error.message}\n`);
      return 2;
    }
    if (!isFatal(error)) throw error;
    await logFatal(error);
    stderr.write(`${PROG}: ${error.message}\n`);
    return 1;
  }
}
