// The one way the Node gateway connects to Cassandra, as configured ([cassandra] in config.md) and as
// gateway/contract/cassandra-writes.md ("Connecting") says.
//
// TLS: given a CA file, the connection is encrypted and the node's certificate is verified against that CA alone
// (and the node's address against the certificate); a client certificate and its key are presented to nodes that
// require one. Errors name the setting or the file, never a password.

import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

import cassandra from 'cassandra-driver';

import { backoffS } from './backoff.js';
import { readCredentials } from './config.js';
import { ConfigError } from './config-error.js';
import { contractNumber } from './contract-constants.js';

const { auth, policies, types } = cassandra;
const ENV_PREFIX = 'TELEMETRY_CASSANDRA_';
// The highest the driver speaks: cassandra-driver 4.10 knows no v5 (types.protocolVersion.isSupported(5) is false).
export const PROTOCOL_VERSION = types.protocolVersion.isSupported(5) ? 5 : 4;
const CONNECT_TIMEOUT_MS = contractNumber('connect_timeout_ms'); // the contract's connect timeout, for every connection

/** The driver's consistency for each of config.md's names. */
export const CONSISTENCY = Object.freeze({
  ONE: types.consistencies.one,
  TWO: types.consistencies.two,
  THREE: types.consistencies.three,
  QUORUM: types.consistencies.quorum,
  ALL: types.consistencies.all,
  LOCAL_QUORUM: types.consistencies.localQuorum,
  EACH_QUORUM: types.consistencies.eachQuorum,
  LOCAL_ONE: types.consistencies.localOne,
  ANY: types.consistencies.any,
});

/** Settings that do not go together; the text names the variables to look at. */
class CassandraSettingsError extends Error {
  constructor(message) {
    super(message);
    this.name = 'CassandraSettingsError';
  }
}

/**
 * The driver reconnects to a node on the schedule that requests and serial ports retry on (backoffS: 200 ms,
 * 400 ms ... up to retry_max_s). The driver's own ExponentialReconnectionPolicy would add up to 15% jitter, which
 * the contract's schedule has not; its default waits up to 10 minutes between attempts, and a gateway must be back
 * within seconds.
 */
export class BackoffReconnectionPolicy extends policies.reconnection.ReconnectionPolicy {
  /** @param {number} maxS the longest wait, seconds ([cassandra] retry_max_s) */
  constructor(maxS) {
    super();
    this.maxS = maxS;
  }

  /** Delays in ms, forever; each schedule starts again from the shortest. */
  * newSchedule() {
    for (let attempt = 1; ; attempt++) yield Math.round(backoffS(attempt, this.maxS) * 1000);
  }

  getOptions() {
    return new Map([['maxDelay', this.maxS * 1000]]);
  }
}

function checkSettings(username, password, tlsCa, tlsCert, tlsKey) {
  if (password && !username) {
    throw new CassandraSettingsError(`a Cassandra password is given without a username (${ENV_PREFIX}USERNAME)`);
  }
  if (Boolean(tlsCert) !== Boolean(tlsKey)) {
    const [given, missing] = tlsCert ? ['certificate', 'key'] : ['key', 'certificate'];
    throw new CassandraSettingsError(`a TLS client ${given} is given without its ${missing}: tls_cert and tls_key `
      + `go together (${ENV_PREFIX}TLS_CERT, ${ENV_PREFIX}TLS_KEY)`);
  }
  if (tlsCert && !tlsCa) {
    throw new CassandraSettingsError(`a TLS client certificate needs tls_ca (${ENV_PREFIX}TLS_CA), the CA that the `
      + "node's certificate is verified against");
  }
}

const PEM_CERTIFICATE_RE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** The CA file's certificates, each checked (Node would ignore a CA it cannot parse, and then trust nothing). */
function readCa(tlsCa) {
  try {
    const pems = readFileSync(tlsCa, 'latin1').match(PEM_CERTIFICATE_RE) ?? [];
    if (pems.length === 0) throw new Error('no PEM certificate found');
    pems.forEach((pem) => new X509Certificate(pem));
    return pems;
  } catch (error) {
    throw new ConfigError('cassandra.tls_ca', 'unreadable', `cannot use TLS CA file ${tlsCa}: ${error.message}`);
  }
}

/**
 * The driver's sslOptions for these files: trusts tls_ca alone (not the system's CAs) to vouch for the node, and
 * verifies it (cassandra-driver's own default is rejectUnauthorized: false); presents tls_cert when given.
 * checkServerIdentity stays Node's: the node's address must be in its certificate.
 */
function tlsOptions(tlsCa, tlsCert, tlsKey) {
  const options = { ca: readCa(tlsCa), rejectUnauthorized: true };
  if (tlsCert) {
    try {
      options.cert = readFileSync(tlsCert);
      options.key = readFileSync(tlsKey);
      createSecureContext(options); // a certificate, a key, and the key of that certificate
    } catch (error) {
      throw new ConfigError('cassandra.tls_cert', 'unreadable',
        `cannot use TLS client certificate ${tlsCert} with key ${tlsKey}: ${error.message}`);
    }
  }
  return options;
}

/**
 * A cassandra-driver Client (not yet connected: call .connect()) for config.cassandra: contact points and port,
 * the local data centre (token-aware, DC-aware routing), the configured consistency and request timeout,
 * credentials (TELEMETRY_CASSANDRA_USERNAME/_PASSWORD or credentials_file), TLS, and reconnects on the backoff
 * schedule. Throws ConfigError for an unreadable credentials or TLS file, CassandraSettingsError for settings
 * that do not go together (a client certificate without tls_ca).
 * @param {object} cassandraConfig config.cassandra
 * @param {{env?: object, keyspace?: string}} [options] env: where the credentials variables are read (default
 *   process.env); keyspace: the session's keyspace
 */
export function buildClient(cassandraConfig, { env = process.env, keyspace } = {}) {
  const config = cassandraConfig;
  const [username, password] = readCredentials(config, env) ?? [null, null];
  checkSettings(username, password, config.tls_ca, config.tls_cert, config.tls_key);
  const options = {
    contactPoints: [...config.hosts],
    localDataCenter: config.local_dc,
    protocolOptions: { port: config.port, maxVersion: PROTOCOL_VERSION },
    policies: {
      // Token-aware: a single-partition batch goes straight to a replica of that partition.
      loadBalancing: new policies.loadBalancing.TokenAwarePolicy(
        new policies.loadBalancing.DCAwareRoundRobinPolicy(config.local_dc)),
      reconnection: new BackoffReconnectionPolicy(config.retry_max_s),
    },
    queryOptions: { consistency: CONSISTENCY[config.consistency.toUpperCase()] },
    socketOptions: { connectTimeout: CONNECT_TIMEOUT_MS, readTimeout: config.request_timeout_s * 1000 },
  };
  if (keyspace) options.keyspace = keyspace; // connect() then fails on a missing keyspace, to be retried
  if (username) options.authProvider = new auth.PlainTextAuthProvider(username, password ?? '');
  if (config.tls_ca) options.sslOptions = tlsOptions(config.tls_ca, config.tls_cert, config.tls_key);
  return new cassandra.Client(options);
}

/** The highest schema/ migration applied to keyspace (0 for none), from its schema_migrations table. */
export async function schemaVersion(client, keyspace) {
  const result = await client.execute(`SELECT max(version) AS v FROM "${keyspace}".schema_migrations WHERE scope = ?`,
    [keyspace], { prepare: true });
  return result.first()?.v ?? 0;
}
