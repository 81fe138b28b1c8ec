// `check`: the config is valid (the caller has loaded it), the spool folder is writable, every serial port exists,
// Cassandra answers and the keyspace has the schema. One line per finding (gateway/contract/process.md, "check"):
// findings on stdout, "problem: ..." on stderr, then "check: OK" or "check: N problem(s)".

import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';

import { buildClient, schemaVersion } from './cassandra-session.js';
import { audit } from './spool/audit.js';
import { FORMAT_VERSION } from './spool/schema.js';

/** The tables schema/ creates; one missing means schema/migrate has not run on the keyspace. */
const SCHEMA_TABLES = Object.freeze(['readings', 'source_days', 'latest', 'day_changes', 'schema_migrations']);
const MAX_ERROR_CHARS = 300;

// The words of a failed TLS handshake (OpenSSL's "SSL routines", the certificate checks, a peer that hung up
// during the handshake).
const TLS_FAILURE_RE = /SSL|TLS|certificate/;
// A node that accepts only TLS hangs up on a plain connection.
const HUNG_UP_RE = /reset by peer|EOF|ECONNRESET|socket hang up|[Cc]onnection closed|Socket was closed/;

/** What an operator should look at, for failures whose own text does not say it (errorText: the error and the
 * errors under it). */
export function connectionHint(errorText, config) {
  if (TLS_FAILURE_RE.test(errorText)) {
    // TLS 1.3 refusals often surface as a bare reset or "internal error": name the usual causes.
    return '; the TLS handshake failed: is tls_ca the CA that signed the node\'s certificate, and does the '
      + 'node require a client certificate (tls_cert/tls_key) signed by a CA it trusts?';
  }
  if (!config.cassandra.tls_ca && HUNG_UP_RE.test(errorText)) {
    return '; if the node accepts only TLS, set tls_ca (and tls_cert/tls_key if it wants a client certificate)';
  }
  return '';
}

/** The error in one line; for the driver's NoHostAvailableError, each host's error with its code (the driver's
 * own message names only the first host, with a stack trace). */
export function failureText(error) {
  const causes = Object.entries(error?.innerErrors ?? {});
  const perHost = causes.map(([host, cause]) => `${host}: ${describe(cause)}`).join('; ');
  const message = String(error?.message ?? error);
  const text = causes.length === 0 ? message : `${message.split('.')[0]}: ${perHost}`;
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

function describe(cause) {
  const message = String(cause?.message ?? cause);
  const code = typeof cause?.code === 'string' && !message.includes(cause.code) ? ` (${cause.code})` : '';
  return `${cause?.name ?? 'Error'}: ${message}${code}`;
}

function firstChars(text, count) {
  return Array.from(text).slice(0, count).join(''); // code points, not UTF-16 units
}

function spoolProblem(spoolPath) {
  const folder = dirname(spoolPath);
  const probe = existsSync(folder) ? folder : dirname(folder);
  try {
    accessSync(probe, constants.W_OK);
    return null;
  } catch {
    return `spool folder ${folder} is not writable by this user`;
  }
}

/** Writes what check finds of the spool file (read-only: nothing is changed); the problem, if any. */
function spoolIntegrity(spoolPath, stdout) {
  if (!existsSync(spoolPath)) {
    stdout.write(`spool    ${spoolPath}: none yet (created at the first start)\n`);
    return null;
  }
  const [line, problem] = spoolFindings(spoolPath, audit(spoolPath));
  stdout.write(`spool    ${spoolPath}: ${line}\n`);
  return problem;
}

/** The spool line's words after the path, and the problem or null (process.md, "check"); found: audit()'s. */
export function spoolFindings(spoolPath, { integrity, version, newer, frames, failing }) {
  if (!integrity.ok) {
    return ['DAMAGED', `spool ${spoolPath} is damaged (${firstChars(integrity.detail, 300)}): the next start moves `
      + 'it aside and rebuilds the spool from what can still be read'];
  }
  if (integrity.detail !== 'ok') return [firstChars(integrity.detail, 300), null];
  if (newer) {
    return [`NEWER FORMAT ${version} (this gateway reads up to ${FORMAT_VERSION})`,
      `spool ${spoolPath} is of format ${version}, newer than this gateway reads (${FORMAT_VERSION}): run the newer `
      + 'gateway, or move the file aside'];
  }
  if (failing > 0) {
    return [`CHECKSUM FAILING in ${failing} of ${frames} frames`,
      `spool ${spoolPath} holds ${failing} frame(s) whose checksum fails: they are never sent; the gateway deletes `
      + 'them as it reaches them and counts them in telemetry_gateway_spool_invalid_frames_total'];
  }
  return [`ok, ${frames} frames`, null];
}

async function cassandraProblem(config, client, stdout) {
  const { keyspace } = config.cassandra;
  try {
    await client.connect();
    const result = await client.execute('SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?',
      [keyspace], { prepare: true });
    const tables = new Set(result.rows.map((row) => row.table_name));
    const missing = SCHEMA_TABLES.filter((name) => !tables.has(name)).sort();
    if (missing.length) return `keyspace ${keyspace} lacks ${missing.join(', ')}: run schema/migrate`;
    const version = await schemaVersion(client, keyspace);
    const hosts = client.hosts.values().map((host) => `${host.address} (${host.datacenter})`).join(', ');
    stdout.write(`cassandra ${hosts}: keyspace ${keyspace}, schema version ${version}\n`);
    return null;
  } catch (error) {
    const { hosts, port } = config.cassandra;
    const text = failureText(error);
    return `cannot reach Cassandra at ${hosts.join(',')}:${port}: ${error?.name ?? 'Error'}: `
      + `${firstChars(text, MAX_ERROR_CHARS)}${connectionHint(text, config)}`;
  } finally {
    await client.shutdown();
  }
}

/**
 * Runs the checks for a loaded config; resolves to the exit status (0: no problem, 1: some). Throws ConfigError
 * for an unreadable credentials or TLS file (exit 2, as a config error).
 * @param {object} config the resolved config (config.js)
 * @param {{stdout?: {write: Function}, stderr?: {write: Function}, env?: object}} [io]
 */
export async function runCheck(config, { stdout = process.stdout, stderr = process.stderr, env = process.env } = {}) {
  const problems = [];
  const spool = spoolProblem(config.spool.path);
  if (spool) problems.push(spool);
  const damaged = spoolIntegrity(config.spool.path, stdout);
  if (damaged) problems.push(damaged);
  for (const port of config.serial.ports) {
    const csv = port.format === 'csv' ? ` csv as ${port.source}: ${port.columns.join(',')}` : '';
    const present = existsSync(port.path);
    stdout.write(`serial   ${port.path} @ ${port.baud}${csv}: ${present ? 'present' : 'MISSING'}\n`);
    if (!present) problems.push(`serial port ${port.path} does not exist (unplugged, or a wrong name?)`);
  }
  const client = buildClient(config.cassandra, { env });
  const cassandra = await cassandraProblem(config, client, stdout);
  if (cassandra) problems.push(cassandra);
  for (const problem of problems) stderr.write(`problem: ${problem}\n`);
  stdout.write(problems.length ? `check: ${problems.length} problem(s)\n` : 'check: OK\n');
  return problems.length ? 1 : 0;
}
