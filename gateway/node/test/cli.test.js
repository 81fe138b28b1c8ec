// The command line (src/cli.js, bin/telemetry-gateway-node): flags, overrides and exit statuses (contract
// process.md); `check` against a closed port and a TLS endpoint it must not trust (no Cassandra needed); and the Cassandra client
// that src/cassandra-session.js builds from the config (options only, no connection).

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import cassandra from 'cassandra-driver';

import { BackoffReconnectionPolicy, buildClient, CONSISTENCY, PROTOCOL_VERSION }
  from '../src/cassandra-session.js';
import { connectionHint, failureText } from '../src/check-command.js';
import { configFrom, main, parseCommandLine } from '../src/cli.js';
import { DEFAULTS, loadConfig } from '../src/config.js';

const BIN = fileURLToPath(new URL('../bin/telemetry-gateway-node', import.meta.url));
const SCRATCH = mkdtempSync(join(tmpdir(), 'cli-test-'));
const SPOOL = join(SCRATCH, 'spool.sqlite');
after(() => rmSync(SCRATCH, { recursive: true, force: true }));

/** The command as a process, with only these TELEMETRY_* variables. */
function gateway(args, env = {}) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TELEMETRY_')));
  const done = spawnSync(process.execPath, [BIN, ...args], { env: { ...clean, ...env }, encoding: 'utf8',
    timeout: 30_000 });
  return { status: done.status, stdout: done.stdout, stderr: done.stderr };
}

function sink() {
  return { text: '', write(chunk) { this.text += chunk; return true; } };
}

function file(name, text) {
  const path = join(SCRATCH, name);
  writeFileSync(path, text);
  return path;
}

describe('usage errors exit 2 with one line', () => {
  const cases = [
    [[], 'a command is required: run, check or decode'],
    [['foo'], 'unknown command "foo": run, check or decode'],
    [['check', '--bogus', 'x'], "check: Unknown option '--bogus'"],
    [['check', '--input', 'x'], "check: Unknown option '--input'"],
    [['check', '--port'], "check: Option '--port <value>' argument missing"],
    [['check', '--conf', 'x'], "check: Unknown option '--conf'"], // no abbreviations
    [['run', '--exit-when-drained=1'], "run: Option '--exit-when-drained' does not take an argument"],
  ];
  for (const [args, start] of cases) {
    it(args.join(' ') || '(nothing)', async () => {
      const [stdout, stderr] = [sink(), sink()];
      assert.equal(await main(args, { stdout, stderr, env: {} }), 2);
      assert.equal(stdout.text, '');
      assert.ok(stderr.text.startsWith(`telemetry-gateway-node: ${start}`), stderr.text);
      assert.ok(stderr.text.endsWith(' (telemetry-gateway-node --help)\n'), stderr.text);
      assert.equal(stderr.text.split('\n').length, 2);
    });
  }

  it('the command does the same as a process', () => {
    const done = gateway(['check', '--bogus']);
    assert.equal(done.status, 2);
    assert.ok(done.stderr.startsWith("telemetry-gateway-node: check: Unknown option '--bogus'"), done.stderr);
  });

  it('-h prints the help and exits 0', async () => {
    for (const args of [['-h'], ['check', '-h'], ['run', '--help']]) {
      const stdout = sink();
      assert.equal(await main(args, { stdout, stderr: sink(), env: {} }), 0);
      assert.match(stdout.text, /^Usage: telemetry-gateway-node/);
    }
    const stdout = sink();
    await main(['run', '-h'], { stdout, stderr: sink(), env: {} });
    assert.match(stdout.text, /--input FILE +read a file \('-' = stdin\)/);
    assert.match(stdout.text, /--exit-when-drained +with --input/);
  });
});

describe('flags', () => {
  it('repeatable --port and --input, = values, "" values', () => {
    const { command, options } = parseCommandLine(['run', '--config=x.toml', '--port', '/dev/a', '--port=/dev/b@9600',
      '--input', '-', '--input', 'f.txt', '--exit-when-drained', '--metrics-listen', '', '--hosts', 'h1,h2']);
    assert.equal(command, 'run');
    assert.deepEqual({ ...options }, { config: 'x.toml', port: ['/dev/a', '/dev/b@9600'], input: ['-', 'f.txt'],
      'exit-when-drained': true, 'metrics-listen': '', hosts: 'h1,h2' });
    assert.deepEqual({ ...parseCommandLine(['check', '--port=-5', '--spool=-a b']).options },
      { port: ['-5'], spool: '-a b' }); // a value that starts with a dash: joined with =
  });

  it('override the environment, which overrides the file', () => {
    const path = file('flags.toml', '[cassandra]\nkeyspace = "from_file"\nport = 9000\n[log]\nlevel = "error"\n');
    const env = { TELEMETRY_CASSANDRA_KEYSPACE: 'from_env', TELEMETRY_LOG_LEVEL: 'warning',
      TELEMETRY_METRICS_LISTEN: '0.0.0.0:1' };
    const { options } = parseCommandLine(['check', '--config', path, '--keyspace', 'from_flag', '--metrics-listen', '',
      '--port', '/dev/a', '--port', '/dev/b@9600', '--spool', '/tmp/s.sqlite', '--hosts', ' h1, h2,']);
    const config = configFrom(options, env);
    assert.equal(config.cassandra.keyspace, 'from_flag');
    assert.equal(config.cassandra.port, 9000);
    assert.equal(config.log.level, 'warning');
    assert.equal(config.metrics.listen, ''); // "" turns the endpoint off
    assert.deepEqual(config.serial.ports.map((port) => [port.path, port.baud]), [['/dev/a', 115200], ['/dev/b', 9600]]);
    assert.equal(config.spool.path, '/tmp/s.sqlite');
    assert.deepEqual(config.cassandra.hosts, ['h1', 'h2']);
  });

  it('take the file from TELEMETRY_CONFIG when --config is not given (or empty)', () => {
    const path = file('env.toml', '[cassandra]\nkeyspace = "named_by_env"\n');
    for (const args of [['check'], ['check', '--config', '']]) {
      const config = configFrom(parseCommandLine(args).options, { TELEMETRY_CONFIG: path });
      assert.equal(config.cassandra.keyspace, 'named_by_env');
    }
  });
});

describe('config errors exit 2 with one line', () => {
  it('a bad value in the file', () => {
    const path = file('bad.toml', '[spool]\nfsync = "never"\n');
    const done = gateway(['run', '--config', path, '--input', '-']);
    assert.equal(done.status, 2);
    assert.equal(done.stdout, '');
    assert.equal(done.stderr, `telemetry-gateway-node: config error at spool.fsync [choice]: must be one of deferred, `
      + `batch, interval, not "never" (in ${path})\n`);
  });

  it('a bad flag value, from the command line', async () => {
    const stderr = sink();
    assert.equal(await main(['check', '--config', file('empty.toml', ''), '--log-level', 'loud'],
      { stdout: sink(), stderr, env: {} }), 2);
    assert.equal(stderr.text, 'telemetry-gateway-node: config error at log.level [choice]: must be one of debug, '
      + 'info, warning, error, not "loud" (from the command line)\n');
  });

  it('run with nothing to read', () => {
    const done = gateway(['run', '--config', file('nothing.toml', `[spool]\npath = "${SPOOL}"\n`)]);
    assert.equal(done.status, 2);
    assert.equal(done.stderr, 'telemetry-gateway-node: config error at serial.ports [required]: nothing to read: '
      + 'give [serial] ports, --port or --input\n');
  });

  it('an unreadable credentials file, when check connects', async () => {
    const path = file('creds.toml', `[spool]\npath = "${SPOOL}"\n[cassandra]\ncredentials_file = "${SCRATCH}/none"\n`);
    const stderr = sink();
    assert.equal(await main(['check', '--config', path], { stdout: sink(), stderr, env: {} }), 2);
    assert.match(stderr.text, /^telemetry-gateway-node: config error at cassandra\.credentials_file \[unreadable\]: /);
  });
});

describe('check', () => {
  it('reports a Cassandra that does not answer, and each serial port, and exits 1', () => {
    const path = file('closed.toml', `[spool]\npath = "${SPOOL}"\n[cassandra]\nhosts = ["127.0.0.1"]\nport = 1\n`
      + '[serial]\nports = ["/dev/null", { path = "/dev/no-such-acm", baud = 9600, format = "csv", source = "room", '
      + 'columns = ["light", "temperature"] }]\n');
    const done = gateway(['check', '--config', path]);
    assert.equal(done.status, 1, done.stderr);
    assert.equal(done.stdout, `spool    ${SPOOL}: none yet (created at the first start)\n`
      + 'serial   /dev/null @ 115200: present\n'
      + 'serial   /dev/no-such-acm @ 9600 csv as room: light,temperature: MISSING\ncheck: 2 problem(s)\n');
    const problems = done.stderr.split('\n');
    assert.equal(problems[0], 'problem: serial port /dev/no-such-acm does not exist (unplugged, or a wrong name?)');
    assert.match(problems[1], /^problem: cannot reach Cassandra at 127\.0\.0\.1:1: NoHostAvailableError: .*REFUSED/);
    assert.equal(problems.length, 3); // one line each, then the final newline
  });

  it('TELEMETRY_CASSANDRA_PORT reaches the connection', () => {
    const done = gateway(['check', '--spool', SPOOL], { TELEMETRY_CASSANDRA_PORT: '1', TELEMETRY_CONFIG: '' });
    assert.equal(done.status, 1);
    assert.match(done.stderr, /^problem: cannot reach Cassandra at 127\.0\.0\.1:1: /);
    assert.equal(done.stdout, `spool    ${SPOOL}: none yet (created at the first start)\ncheck: 1 problem(s)\n`);
  });
});

describe('connection hints', () => {
  const plain = loadConfig(null, {}, { env: {} });
  const tls = loadConfig(null, {}, { env: { TELEMETRY_CASSANDRA_TLS_CA: 'ca.crt' } });

  it('name the TLS handshake, or TLS when the node hangs up on a plain connection', () => {
    assert.match(connectionHint('error:0A000086:SSL routines::certificate verify failed', tls), /TLS handshake failed/);
    assert.match(connectionHint('Error: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)', tls), /handshake/);
    assert.match(connectionHint('Error: read ECONNRESET', plain), /^; if the node accepts only TLS, set tls_ca/);
    assert.equal(connectionHint('Error: read ECONNRESET', tls), '');
    assert.equal(connectionHint('Error: connect ECONNREFUSED 127.0.0.1:1', plain), '');
  });

  it('see every host\'s error, in one line', () => {
    const error = new cassandra.errors.NoHostAvailableError({
      'h1:9042': Object.assign(new Error('connect ECONNREFUSED h1:9042'), { code: 'ECONNREFUSED' }),
      'h2:9042': Object.assign(new Error('read\nfailed'), { code: 'ECONNRESET' }),
    });
    assert.equal(failureText(error), 'All host(s) tried for query failed: h1:9042: Error: connect ECONNREFUSED '
      + 'h1:9042; h2:9042: Error: read failed (ECONNRESET)');
  });
});

const HAVE_OPENSSL = spawnSync('openssl', ['version']).status === 0;

describe('TLS', { skip: !HAVE_OPENSSL && 'openssl is not installed' }, () => {
  const pki = {};
  let server;

  before(async () => {
    const openssl = (...args) => execFileSync('openssl', args, { cwd: SCRATCH, stdio: 'pipe' });
    const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl('req', '-x509', ...newKey, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=test-ca');
    openssl('req', '-x509', ...newKey, '-keyout', 'other.key', '-out', 'other.crt', '-days', '2', '-subj', '/CN=o');
    openssl('req', ...newKey, '-keyout', 'node.key', '-out', 'node.csr', '-subj', '/CN=node');
    writeFileSync(join(SCRATCH, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
    openssl('x509', '-req', '-in', 'node.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
      '-out', 'node.crt', '-days', '2', '-extfile', 'san.ext');
    for (const name of ['ca.crt', 'other.crt', 'other.key', 'node.crt', 'node.key']) pki[name] = join(SCRATCH, name);
    server = createServer({ key: readFileSync(pki['node.key']), cert: readFileSync(pki['node.crt']) },
      (socket) => socket.destroy());
    server.on('tlsClientError', () => {});
    await new Promise((resolve) => { server.listen(0, '127.0.0.1', resolve); });
  });

  after(() => server?.close());

  const config = (env) => loadConfig(null, {}, { env });

  it('verifies the node against tls_ca alone, and presents the client certificate', () => {
    const client = buildClient(config({ TELEMETRY_CASSANDRA_TLS_CA: pki['ca.crt'],
      TELEMETRY_CASSANDRA_TLS_CERT: pki['other.crt'], TELEMETRY_CASSANDRA_TLS_KEY: pki['other.key'] }).cassandra);
    const { sslOptions } = client.options;
    assert.equal(sslOptions.rejectUnauthorized, true); // the driver's default would be false
    assert.equal(sslOptions.checkServerIdentity, undefined); // Node's: the address must be in the certificate
    assert.deepEqual(sslOptions.ca.map((pem) => pem.trim()), [readFileSync(pki['ca.crt'], 'latin1').trim()]);
    assert.deepEqual(sslOptions.cert, readFileSync(pki['other.crt']));
  });

  it('refuses TLS files it cannot use, naming the setting', () => {
    const refused = (env, key) => assert.throws(() => buildClient(config(env).cassandra), { key, rule: 'unreadable' });
    refused({ TELEMETRY_CASSANDRA_TLS_CA: join(SCRATCH, 'missing-ca.crt') }, 'cassandra.tls_ca');
    refused({ TELEMETRY_CASSANDRA_TLS_CA: file('garbage.crt', 'not a certificate\n') }, 'cassandra.tls_ca');
    refused({ TELEMETRY_CASSANDRA_TLS_CA: pki['ca.crt'], TELEMETRY_CASSANDRA_TLS_CERT: pki['node.crt'],
      TELEMETRY_CASSANDRA_TLS_KEY: pki['other.key'] }, 'cassandra.tls_cert'); // not that certificate's key
    // a client certificate without tls_ca is refused when the config is read: a config error, exit 2
    assert.throws(() => config({ TELEMETRY_CASSANDRA_TLS_CERT: pki['other.crt'],
      TELEMETRY_CASSANDRA_TLS_KEY: pki['other.key'] }), { key: 'cassandra.tls_ca', rule: 'required' });
  });

  it('check reports a node whose certificate tls_ca did not sign, with the TLS hint', async () => {
    const path = file('tls.toml', `[spool]\npath = "${SPOOL}"\n[cassandra]\nport = ${server.address().port}\n`
      + `tls_ca = "${pki['other.crt']}"\n`);
    const [stdout, stderr] = [sink(), sink()];
    assert.equal(await main(['check', '--config', path], { stdout, stderr, env: {} }), 1);
    assert.match(stderr.text, /^problem: cannot reach Cassandra at 127\.0\.0\.1:\d+: NoHostAvailableError: .*certif/);
    assert.ok(stderr.text.endsWith("; the TLS handshake failed: is tls_ca the CA that signed the node's certificate, "
      + 'and does the node require a client certificate (tls_cert/tls_key) signed by a CA it trusts?\n'));
    assert.equal(stdout.text, `spool    ${SPOOL}: none yet (created at the first start)\ncheck: 1 problem(s)\n`);
  });
});

describe('the Cassandra client', () => {
  const schedule = (policy, n) => {
    const delays = policy.newSchedule();
    return Array.from({ length: n }, () => delays.next().value);
  };

  it('reconnects on the one backoff schedule, from the shortest delay each time', () => {
    const policy = new BackoffReconnectionPolicy(10);
    assert.deepEqual(schedule(policy, 8), [200, 400, 800, 1600, 3200, 6400, 10000, 10000]);
    assert.deepEqual(schedule(policy, 2), [200, 400]);
    assert.deepEqual(schedule(new BackoffReconnectionPolicy(1), 1000).slice(2), [800, ...Array(997).fill(1000)]);
  });

  it('gets the configured options', () => {
    const config = loadConfig(null, {}, { env: { TELEMETRY_CASSANDRA_HOSTS: '127.0.0.7,127.0.0.8',
      TELEMETRY_CASSANDRA_PORT: '9142', TELEMETRY_CASSANDRA_RETRY_MAX_S: '2', TELEMETRY_CASSANDRA_CONSISTENCY: 'one',
      TELEMETRY_CASSANDRA_LOCAL_DC: 'dc2', TELEMETRY_CASSANDRA_REQUEST_TIMEOUT_S: '2.5' } });
    const { options } = buildClient(config.cassandra, { env: {} });
    assert.deepEqual(options.contactPoints, ['127.0.0.7', '127.0.0.8']);
    assert.equal(options.protocolOptions.port, 9142);
    assert.equal(options.protocolOptions.maxVersion, PROTOCOL_VERSION);
    assert.equal(PROTOCOL_VERSION, 4); // cassandra-driver 4.10 has no v5
    assert.equal(options.localDataCenter, 'dc2');
    assert.equal(options.policies.loadBalancing.childPolicy.localDc, 'dc2');
    assert.deepEqual(schedule(options.policies.reconnection, 5), [200, 400, 800, 1600, 2000]);
    assert.equal(options.queryOptions.consistency, cassandra.types.consistencies.one);
    assert.equal(options.socketOptions.readTimeout, 2500);
    assert.equal(options.sslOptions, undefined);
    assert.ok(!(options.authProvider instanceof cassandra.auth.PlainTextAuthProvider)); // the driver's NoAuthProvider
  });

  it('defaults to LOCAL_QUORUM in datacenter1, and every consistency has its driver value', () => {
    const { options } = buildClient(DEFAULTS.cassandra, { env: {} });
    assert.equal(options.queryOptions.consistency, cassandra.types.consistencies.localQuorum);
    assert.equal(options.localDataCenter, 'datacenter1');
    for (const value of Object.values(CONSISTENCY)) assert.equal(typeof value, 'number');
  });

  it('logs in with the credentials of the environment, never of a flag', () => {
    const { options } = buildClient(DEFAULTS.cassandra, { env: { TELEMETRY_CASSANDRA_USERNAME: 'gw',
      TELEMETRY_CASSANDRA_PASSWORD: 'pw' } });
    assert.ok(options.authProvider instanceof cassandra.auth.PlainTextAuthProvider);
    assert.equal(options.authProvider.username, 'gw');
    assert.equal(options.authProvider.password, 'pw');
  });
});
