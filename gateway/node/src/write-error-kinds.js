// Failed Cassandra requests by kind: portable words for the write_errors metric (gateway/contract/metrics.json),
// the same in every gateway, instead of one language's exception names (the Python gateway's
// write_error_kinds.py).
//
// The Python mapping, class by class, and what cassandra-driver 4.10 hands over for the same failure:
// - timeout: the server's write and read timeouts (ResponseError writeTimeout, readTimeout: not the *Failure
//   codes), the client's request timeout (OperationTimedOutError), a socket timeout (Python's TimeoutError:
//   ETIMEDOUT, or the driver's 'Connection timeout' when connecting takes too long);
// - unavailable: too few replicas alive (unavailableException), a bootstrapping node (isBootstrapping), a lost or
//   refused connection (Python's ConnectionException and ConnectionError: the driver's 'Socket was closed', which
//   it marks isSocketError, and ECONNREFUSED, ECONNRESET, ECONNABORTED, EPIPE, ESHUTDOWN);
// - overloaded: the server's overloaded error;
// - unauthorized: no permission (unauthorized), a refused login (badCredentials, AuthenticationError);
// - invalid: the server's invalid request error (invalid) only: a syntax, configuration or already-exists error
//   is "other" in Python too (its SyntaxException is not an InvalidRequest);
// - other: everything else (truncate, read/write/function failures, server and protocol errors, a busy
//   connection, a wrong parameter type...).

import cassandra from 'cassandra-driver';

const { errors, types } = cassandra;
const CODE = types.responseErrorCodes;

/** The label values of write_errors{error}, in the contract's order. */
export const ERROR_KINDS = Object.freeze(['timeout', 'unavailable', 'overloaded', 'unauthorized', 'invalid', 'other']);

const RESPONSE_KINDS = new Map([
  [CODE.writeTimeout, 'timeout'],
  [CODE.readTimeout, 'timeout'],
  [CODE.unavailableException, 'unavailable'],
  [CODE.isBootstrapping, 'unavailable'],
  [CODE.overloaded, 'overloaded'],
  [CODE.unauthorized, 'unauthorized'],
  [CODE.badCredentials, 'unauthorized'],
  [CODE.invalid, 'invalid'],
]);

// Node's socket errors by errno name: those of Python's TimeoutError and ConnectionError subclasses.
const SOCKET_KINDS = new Map([
  ['ETIMEDOUT', 'timeout'],
  ['ECONNREFUSED', 'unavailable'],
  ['ECONNRESET', 'unavailable'],
  ['ECONNABORTED', 'unavailable'],
  ['EPIPE', 'unavailable'],
  ['ESHUTDOWN', 'unavailable'],
]);

/**
 * One of ERROR_KINDS. NoHostAvailableError is what the driver gives once every host failed: its hosts' errors
 * (innerErrors, by address) tell why (every host overloaded, the credentials refused); when they do not agree,
 * or there are none, it is "unavailable".
 */
export function errorKind(error) {
  if (error instanceof errors.NoHostAvailableError) {
    const kinds = new Set(Object.values(error.innerErrors ?? {}).map(errorKind));
    const [kind] = kinds;
    return kinds.size === 1 && kind !== 'other' ? kind : 'unavailable';
  }
  if (error instanceof errors.ResponseError) return RESPONSE_KINDS.get(error.code) ?? 'other';
  if (error instanceof errors.OperationTimedOutError) return 'timeout';
  if (error instanceof errors.AuthenticationError) return 'unauthorized';
  if (error instanceof errors.DriverError) {
    if (error.isSocketError) return 'unavailable';
    if (error.message === 'Connection timeout') return 'timeout';
    return 'other';
  }
  if (error instanceof Error && typeof error.code === 'string') return SOCKET_KINDS.get(error.code) ?? 'other';
  return 'other';
}
