// telemetry-gateway-node run | check | counters | decode: the command line of gateway/contract/process.md. Usage
// and config errors exit 2.

import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { ConfigError, checkCredentialsMode, loadConfig } from './config.js';
import { loadSigningPolicy } from './signing-config.js';
import { versionLine } from './version.js';

export const PROG = 'telemetry-gateway-node';
const DEFAULT_CONFIG = '/etc/telemetry-gateway/config.toml';

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

const MAIN_HELP = `Usage: ${PROG} <command> [options]

Serial telemetry frames into Cassandra.

Commands:
  run      read inputs, spool, write to Cassandra (the service)
  check    validate the config, connect, report the schema version
  counters list the spool's signed-frame counters, or reset a re-keyed node's (counters --help)
  decode   decode lines from stdin or a port (--port) as the gateway would, verified with --keys; one JSON
           line each (decode --help)

Options:
  -h, --help   this help
  --version    print the version and exit
`;
const CONFIG_HELP = `  -h, --help                  this help
  --config FILE               TOML file (env TELEMETRY_CONFIG; default ${DEFAULT_CONFIG} if it exists)
  --port PATH[@BAUD]          serial port, repeatable (replaces [serial] ports; a csv port needs the config file)
  --spool PATH                spool file ([spool] path)
  --hosts HOST,HOST           Cassandra contact points ([cassandra] hosts)
  --keyspace NAME             [cassandra] keyspace
  --metrics-listen HOST:PORT  [metrics] listen; "" turns it off
  --log-level LEVEL           [log] level
`;
const HELP = {
  run: `Usage: ${PROG} run [options]

Read inputs, spool, write to Cassandra (the service).

Options:
${CONFIG_HELP}  --input FILE                read a file ('-' = stdin) instead of or besides serial ports; repeatable
  --exit-when-drained         with --input: exit once every line read is in Cassandra (replays, benchmarks)
`,
  check: `Usage: ${PROG} check [options]

Validate the config, connect, report the schema version.

Options:
${CONFIG_HELP}`,
};

/** A command line that cannot be run: the message on stderr, exit 2. */
class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * The command line (without node and the script) → {command, options} with options as parseArgs gives them
 * ({config, port: [...], spool, hosts, keyspace, 'metrics-listen', 'log-level'; run: input: [...],
 * 'exit-when-drained'}), or {help: text} for -h; throws UsageError.
 */
export function parseCommandLine(argv) {
  const [command, ...args] = argv;
  if (command === '-h' || command === '--help') return { help: MAIN_HELP };
  if (command === undefined) throw new UsageError('a command is required: run, check or decode');
  if (!Object.hasOwn(OPTIONS, command)) {
    throw new UsageError(`unknown command ${JSON.stringify(command)}: run, check or decode`);
  }
  let values;
  try {
    ({ values } = parseArgs({ args, options: OPTIONS[command], strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError(`${command}: ${error.message}`);
  }
  if (values.help) return { help: HELP[command] };
  delete values.help;
  return { command, options: values };
}

/** The config for these options: --config, else env TELEMETRY_CONFIG, else DEFAULT_CONFIG if it exists; flags
 * as overrides. */
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
  loadSigningPolicy(config, env); // a keys file that cannot be used is a config error, before anything opens
  checkCredentialsMode(config.cassandra, env);
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
  loadSigningPolicy(config, io.env); // a keys file that cannot be used is a config error
  checkCredentialsMode(config.cassandra, io.env);
  const { runCheck } = await import('./check-command.js');
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
 * error are thrown (an uncaught error exits 1 with its stack).
 * @param {string[]} argv the arguments after the script
 * @param {{stdout?: {write: Function}, stderr?: {write: Function}, env?: object}} [io]
 */
export async function main(argv, io = {}) {
  const { stdout = process.stdout, stderr = process.stderr, env = process.env } = io;
  if (argv.length === 1 && argv[0] === '--version') {
    stdout.write(`${versionLine()}\n`);
    return 0;
  }
  if (argv[0] === 'decode') { // its own arguments, parsed by decode-command.js
    const { decodeCommand } = await import('./decode-command.js');
    return decodeCommand(argv.slice(1), { stdout, stderr });
  }
  if (argv[0] === 'counters') { // list | reset, parsed by counters-command.js
    const { countersCommand } = await import('./counters-command.js');
    try {
      return await countersCommand(argv.slice(1), { prog: PROG, stdout, stderr, env, configFrom, loadSigningPolicy });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      stderr.write(`${PROG}: ${error.message}\n`);
      return 2;
    }
  }
  let parsed;
  try {
    parsed = parseCommandLine(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    stderr.write(`${PROG}: ${error.message} (${PROG} --help)\n`);
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
