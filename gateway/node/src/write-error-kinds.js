// Failed Cassandra requests by kind (gateway/contract/cassandra-writes.md, "Error kinds"): the server's error code
// or the failure's condition decides the kind, a portable word for the write_errors metric.
//
// kindOf() is the contract's table; conditionOf() reads the code or condition off what the driver gives.

import cassandra from 'cassandra-driver';

const { errors } = cassandra;

/** The label values of write_errors{error}, in the contract's order. */
export const ERROR_KINDS = Object.freeze(['timeout', 'unavailable', 'overloaded', 'unauthorized', 'invalid', 'other']);

/** The server's error codes (CQL native protocol, "Error codes") that are not "other". */
const SERVER_ERROR_KINDS = new Map([
  [0x1100, 'timeout'], // Write_timeout
  [0x1200, 'timeout'], // Read_timeout
  [0x1000, 'unavailable'], // Unavailable
  [0x1002, 'unavailable'], // Is_bootstrapping
  [0x1001, 'overloaded'], // Overloaded
  [0x0100, 'unauthorized'], // Bad credentials
  [0x2100, 'unauthorized'], // Unauthorized
  [0x2000, 'invalid'], // Syntax_error
  [0x2200, 'invalid'], // Invalid
  [0x2300, 'invalid'], // Config_error
  [0x2400, 'invalid'], // Already_exists
]);

const CONDITION_KINDS = new Map([
  ['request_timeout', 'timeout'],
  ['connect_timeout', 'timeout'],
  ['connection_refused', 'unavailable'],
  ['connection_closed', 'unavailable'],
  ['host_unreachable', 'unavailable'],
  ['authentication_refused', 'unauthorized'],
]);

/**
 * One of ERROR_KINDS for a condition: a server error code (a number), a named condition (a string), or
 * {noHostReachable: [each host's condition]}. No host reachable takes the kind its hosts agree on, unless that is
 * "other"; else it is "unavailable".
 */
export function kindOf(condition) {
  if (typeof condition === 'number') return SERVER_ERROR_KINDS.get(condition) ?? 'other';
  if (typeof condition === 'string') return CONDITION_KINDS.get(condition) ?? 'other';
  const kinds = new Set(condition.noHostReachable.map(kindOf));
  const [kind] = kinds;
  return kinds.size === 1 && kind !== 'other' ? kind : 'unavailable';
}

// Socket errors by their POSIX error name.
const ERRNO_CONDITIONS = new Map([
  ['ETIMEDOUT', 'connect_timeout'],
  ['ECONNREFUSED', 'connection_refused'],
  ['ECONNRESET', 'connection_closed'],
  ['ECONNABORTED', 'connection_closed'],
  ['EPIPE', 'connection_closed'],
  ['ESHUTDOWN', 'connection_closed'],
  ['EHOSTUNREACH', 'host_unreachable'],
  ['ENETUNREACH', 'host_unreachable'],
]);

/** The condition of what the driver gives for a failed request or connect. */
export function conditionOf(error) {
  if (error instanceof errors.NoHostAvailableError) {
    return { noHostReachable: Object.values(error.innerErrors ?? {}).map(conditionOf) };
  }
  if (error instanceof errors.ResponseError) return error.code;
  if (error instanceof errors.OperationTimedOutError) return 'request_timeout';
  if (error instanceof errors.AuthenticationError) return 'authentication_refused';
  if (error instanceof errors.DriverError) {
    if (error.isSocketError) return 'connection_closed';
    if (error.message === 'Connection timeout') return 'connect_timeout'; // the driver's connectTimeout passed
    return 'other';
  }
  if (error instanceof Error && typeof error.code === 'string') return ERRNO_CONDITIONS.get(error.code) ?? 'other';
  return 'other';
}

/** The condition as a log line names it (cassandra-writes.md, Error kinds): 0x1100, connection_refused,
 * no_host_reachable. */
export function conditionName(condition) {
  if (typeof condition === 'number') return `0x${condition.toString(16).toUpperCase().padStart(4, '0')}`;
  if (typeof condition === 'string') return condition;
  return 'no_host_reachable';
}

/** The error's message for a log's detail field: its first line, at most `limit` characters. */
export function firstLine(error, limit = 200) {
  return String(error?.message ?? error ?? '').trim().split('\n')[0].slice(0, limit);
}

/** The kind of what the driver gives. */
export function errorKind(error) {
  return kindOf(conditionOf(error));
}
