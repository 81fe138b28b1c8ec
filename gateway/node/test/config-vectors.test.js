// gateway/contract/config-vectors against the config parser, and `check` printing each invalid case's error;
// config.md documents every key; then the parser's own promises: the example file, overrides, error lines,
// credentials.

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { main } from '../src/cli.js';
import { ConfigError, DEFAULTS, loadConfig, parseConfig, readCredentials, readToml } from '../src/config.js';
import { quote, RULES } from '../src/config-error.js';

const CONTRACT = fileURLToPath(new URL('../../contract/', import.meta.url));
const VECTORS = join(CONTRACT, 'config-vectors');
const INDEX = JSON.parse(readFileSync(join(VECTORS, 'index.json'), 'utf8'));
const EXAMPLE = fileURLToPath(new URL('../../contract/telemetry-gateway.example.toml', import.meta.url));
const SCRATCH = mkdtempSync(join(tmpdir(), 'config-test-'));
after(() => rmSync(SCRATCH, { recursive: true, force: true }));

/** A writer that keeps what is written, for main()'s stdout and stderr. */
function sink() {
  return { text: '', write(chunk) { this.text += chunk; return true; } };
}

function resolved(config) {
  return JSON.parse(JSON.stringify(config));
}

describe('config vectors: valid', () => {
  for (const c of INDEX.valid) {
    it(c.file, () => {
      const data = readToml(join(VECTORS, c.file));
      assert.deepEqual(resolved(parseConfig(data, {}, { env: c.env ?? {} })), c.resolved);
    });
  }
});

function expectedInMessage(c) {
  return c.key ? `at ${c.key} [${c.rule}]` : `[${c.rule}]`;
}

describe('config vectors: invalid', () => {
  for (const c of INDEX.invalid) {
    it(c.file, () => {
      assert.ok(RULES.includes(c.rule));
      assert.throws(() => loadConfig(join(VECTORS, c.file), {}, { env: c.env ?? {} }), (error) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.deepEqual([error.key, error.rule], [c.key, c.rule]);
        return true;
      });
    });
  }
});

describe('check prints each invalid config\'s error and exits 2', () => {
  for (const c of INDEX.invalid) {
    it(c.file, async () => {
      const [stdout, stderr] = [sink(), sink()];
      const status = await main(['check', '--config', join(VECTORS, c.file)], { stdout, stderr, env: c.env ?? {} });
      assert.equal(status, 2);
      assert.equal(stdout.text, '');
      assert.match(stderr.text, /^telemetry-gateway-node: config error[^\n]*\n$/);
      assert.ok(stderr.text.includes(expectedInMessage(c)), stderr.text);
    });
  }
});

describe('the vectors and config.md', () => {
  it('config.md documents every key, its variable and every rule', () => {
    const text = readFileSync(join(CONTRACT, 'config.md'), 'utf8');
    for (const [section, keys] of Object.entries(DEFAULTS)) {
      for (const key of Object.keys(keys)) {
        assert.ok(text.includes(`\`${section}.${key}\``), `${section}.${key}`);
        assert.ok(text.includes(`TELEMETRY_${section.toUpperCase()}_${key.toUpperCase()}`), `${section}.${key}`);
      }
    }
    for (const name of ['path', 'baud', 'format', 'source', 'columns']) {
      assert.ok(text.includes(`\`serial.ports[i].${name}\``), name);
    }
    for (const rule of RULES) assert.ok(text.includes(`| \`${rule}\` |`), rule);
  });

  it('the invalid vectors break every rule', () => {
    assert.deepEqual(new Set(INDEX.invalid.map((c) => c.rule)), new Set(RULES));
    assert.throws(() => readFileSync(join(VECTORS, 'invalid', 'absent.toml')), { code: 'ENOENT' });
  });

  it('every vector file is in index.json (none is skipped silently)', () => {
    const listed = new Set([...INDEX.invalid, ...INDEX.valid].map((c) => c.file));
    for (const folder of ['invalid', 'valid']) {
      for (const name of readdirSync(join(VECTORS, folder))) assert.ok(listed.has(`${folder}/${name}`), name);
    }
  });
});

describe('config', () => {
  it('the example documents every key and loads', () => {
    const example = readToml(EXAMPLE);
    const keysOf = (config) => Object.fromEntries(Object.entries(config).map(([s, keys]) => [s, Object.keys(keys)]));
    assert.deepEqual(keysOf(example), keysOf(DEFAULTS));
    const config = loadConfig(EXAMPLE, {}, { env: {} });
    assert.deepEqual(resolved(config.serial.ports),
      [{ path: '/dev/ttyUSB0', baud: 115200, format: 'auto', source: '', columns: [], trusted: false }]);
    assert.deepEqual(config.cassandra, DEFAULTS.cassandra); // the example shows the defaults
    assert.deepEqual(config.decode, DEFAULTS.decode);
  });

  it('the example\'s commented rules load uncommented (the first "#" of each of their lines removed)', () => {
    const text = readFileSync(EXAMPLE, 'utf8');
    const mark = text.indexOf('# [[alerts]]');
    const file = join(SCRATCH, 'example-rules.toml');
    writeFileSync(file, text.slice(0, mark) + text.slice(mark).split('\n').map((line) => line.slice(1)).join('\n'));
    const config = loadConfig(file, {}, { env: {} });
    assert.deepEqual(config.alerts.map((rule) => [rule.name, rule.below, rule.above, rule.silent_s, rule.command[0]]),
      [['frost', 2, null, null, '/usr/local/bin/telemetry-alert-webhook'],
        ['heat', null, 35, null, '/usr/local/bin/telemetry-alert-webhook'],
        ['board_silent', null, null, 900, '/usr/local/bin/telemetry-alert-webhook']]);
  });

  it('the environment, then flags, override the file', () => {
    const env = { TELEMETRY_CASSANDRA_HOSTS: '10.0.0.5, 10.0.0.6', TELEMETRY_SPOOL_MAX_MB: '64',
      TELEMETRY_CASSANDRA_PORT: '9142', TELEMETRY_SERIAL_PORTS: '/dev/a,/dev/b@9600' };
    const config = loadConfig(EXAMPLE, { cassandra: { port: '9999' }, serial: { ports: ['/dev/c,d@300'] } }, { env });
    assert.deepEqual(config.cassandra.hosts, ['10.0.0.5', '10.0.0.6']);
    assert.equal(config.spool.max_mb, 64);
    assert.equal(config.cassandra.port, 9999);
    // A --port value is one entry: not split at commas (a flag given twice gives two entries).
    assert.deepEqual(resolved(config.serial.ports), [{ path: '/dev/c,d', baud: 300, format: 'auto', source: '',
      columns: [], trusted: false }]);
  });

  it('the resolved config is frozen', () => {
    const config = loadConfig(null, {}, { env: {} });
    assert.throws(() => { config.spool.path = 'x'; }, TypeError);
    assert.throws(() => { config.cassandra.hosts.push('x'); }, TypeError);
    assert.equal(DEFAULTS.cassandra.hosts[0], '127.0.0.1');
  });

  it('a bad environment value names the variable', () => {
    assert.throws(() => loadConfig(null, {}, { env: { TELEMETRY_CASSANDRA_MAX_IN_FLIGHT: 'lots' } }), {
      message: 'config error at cassandra.max_in_flight [type]: must be a whole number, not "lots" '
        + '(from TELEMETRY_CASSANDRA_MAX_IN_FLIGHT)',
    });
  });

  it('file errors say which file, values quoted as JSON', () => {
    const path = join(SCRATCH, 'c.toml');
    const cases = [
      ['[cassandra]\nport = 70000\n', 'at cassandra.port [range]: must be 1..65535, not 70000'],
      ['[spool]\nmax_mb = 0\n', 'at spool.max_mb [range]: must be more than 0 and at most 1048576, not 0'],
      ['[spool]\nmax_mb = nan\n', 'at spool.max_mb [range]: must be finite, not nan'],
      ['[cassandra]\nport = 9042.5\n', 'at cassandra.port [type]: must be a whole number, not 9042.5'],
      ['[cassandra]\nbatch_rows = true\n', 'at cassandra.batch_rows [type]: must be a whole number, not true'],
      ['[cassandra]\nport = 99999999999999999999\n',
        'at cassandra.port [range]: must be 1..65535, not 99999999999999999999'],
      ['[cassandra]\nhosts = "a"\n', 'at cassandra.hosts [type]: must be a list of strings, not "a"'],
      ['[log]\nlevel = "loud"\n', 'at log.level [choice]: must be one of debug, info, warning, error, not "loud"'],
      ['[serial]\nports = [{ path = "/dev/a", format = "csv", source = "room", columns = ["t"] }]\n',
        'at serial.ports[0].columns[0] [syntax]: "t" is not a metric name ([a-z][a-z0-9_]{0,15}, not t)'],
      ['[cassandra]\ntls_cert = "c.crt"\n', 'at cassandra.tls_key [together]: tls_cert and tls_key go together'],
    ];
    for (const [text, expected] of cases) {
      writeFileSync(path, text);
      const suffix = expected.includes('[together]') ? '' : ` (in ${path})`;
      assert.throws(() => loadConfig(path, {}, { env: {} }), { message: `config error ${expected}${suffix}` }, text);
    }
  });

  it('a missing file is unreadable, a broken one toml_syntax, each in one line', () => {
    assert.throws(() => loadConfig('/nonexistent.toml', {}, { env: {} }), {
      message: 'config error [unreadable]: cannot read config /nonexistent.toml: no such file or directory',
    });
    const path = join(SCRATCH, 'broken.toml');
    writeFileSync(path, 'a = = 1\n');
    assert.throws(() => loadConfig(path, {}, { env: {} }), {
      message: `config error [toml_syntax]: config ${path} is not valid TOML: Invalid value (at line 1, column 5)`,
    });
    writeFileSync(path, Buffer.from([0x61, 0x3d, 0x22, 0xff, 0x22, 0x0a]));
    assert.throws(() => loadConfig(path, {}, { env: {} }), { key: '', rule: 'toml_syntax' });
  });

  it('choices in any case resolve to the case shown', () => {
    const config = parseConfig({ cassandra: { consistency: 'local_one' } }, { log: { level: 'DEBUG' } }, { env: {} });
    assert.equal(config.cassandra.consistency, 'LOCAL_ONE');
    assert.equal(config.log.level, 'debug');
  });

  it('credentials come from the environment or the credentials file', () => {
    const config = loadConfig(null, {}, { env: {} });
    assert.equal(readCredentials(config.cassandra, {}), null);
    assert.deepEqual(readCredentials(config.cassandra, { TELEMETRY_CASSANDRA_USERNAME: 'gw',
      TELEMETRY_CASSANDRA_PASSWORD: 'pw' }), ['gw', 'pw']);
    const secret = join(SCRATCH, 'credentials.toml');
    writeFileSync(secret, 'username = "gw"\npassword = "s3cret"\n');
    const fromFile = loadConfig(null, {}, { env: { TELEMETRY_CASSANDRA_CREDENTIALS_FILE: secret } });
    assert.deepEqual(readCredentials(fromFile.cassandra, {}), ['gw', 's3cret']);
    writeFileSync(secret, 'username = "gw"\n');
    const refused = (rule) => ({ key: 'cassandra.credentials_file', rule });
    assert.throws(() => readCredentials(fromFile.cassandra, {}), refused('required'));
    const absent = parseConfig({ cassandra: { credentials_file: `${secret}.absent` } }, {}, { env: {} });
    assert.throws(() => readCredentials(absent.cassandra, {}), refused('unreadable'));
  });
});

describe('values in error text, quoted as JSON', () => {
  it('numbers, strings, lists, tables, booleans', () => {
    const cases = [[10, '10'], [0.5, '0.5'], [NaN, 'nan'], [Infinity, 'inf'], [-Infinity, '-inf'],
      [2n ** 70n, '1180591620717411303424'], ['lots', '"lots"'], ['a\nb\u001b\u00e9"', '"a\\nb\\u001b\u00e9\\""'],
      [[1, 'a', false], '[1,"a",false]'], [{ path: '/dev/a', baud: 2.5 }, '{"path":"/dev/a","baud":2.5}']];
    for (const [value, text] of cases) assert.equal(quote(value), text, String(value));
  });
});
