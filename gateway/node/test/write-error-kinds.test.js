// errorKind maps cassandra-driver 4.10's errors, as a failed request hands them over, to the portable words of
// gateway/contract/metrics.json (write_errors{error}), meaning what the Python gateway's error_kind means for the
// same failure (the Python gateway's test_write_error_kinds.py). The last cases get their errors from the driver
// itself, connecting to a port that refuses, one that stays silent and a fake node that answers with an error.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { describe, it } from 'node:test';

import cassandra from 'cassandra-driver';

import { ERROR_KINDS, errorKind } from '../src/write-error-kinds.js';

const { errors, types } = cassandra;
const CODE = types.responseErrorCodes;
const HOST = '127.0.0.1:9042';

const response = (code, message) => new errors.ResponseError(code, message);
const overloaded = response(CODE.overloaded, 'Server is in overloaded state. Cannot accept more requests');
const badCredentials = response(CODE.badCredentials, 'Provided username gateway and/or password are incorrect');
const socketClosed = Object.assign(new errors.DriverError('Socket was closed'), { isSocketError: true });
/** An error of Node's net module, as the driver passes it on. */
const systemError = (code, message) => Object.assign(new Error(message), { code, syscall: 'connect' });
const noHost = (innerErrors) => new errors.NoHostAvailableError(innerErrors);

describe('each driver error has its kind', () => {
  const cases = [
    [response(CODE.writeTimeout, 'Server timeout during batched write query at consistency LOCAL_QUORUM '
      + '(1 peer(s) acknowledged the write over 2 required)'), 'timeout'],
    [response(CODE.readTimeout, 'Server timeout during read query'), 'timeout'],
    [new errors.OperationTimedOutError('The host 127.0.0.1:9042 did not reply before timeout 12000 ms', HOST),
      'timeout'],
    [new errors.DriverError('Connection timeout'), 'timeout'], // connecting took longer than connectTimeout
    [systemError('ETIMEDOUT', 'connect ETIMEDOUT 10.0.0.9:9042'), 'timeout'],
    [response(CODE.unavailableException, 'Not enough replicas available for query at consistency LOCAL_QUORUM '
      + '(2 required but only 1 alive)'), 'unavailable'],
    [response(CODE.isBootstrapping, 'Cannot read from a bootstrapping node'), 'unavailable'],
    [socketClosed, 'unavailable'],
    [systemError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9042'), 'unavailable'],
    [systemError('ECONNRESET', 'read ECONNRESET'), 'unavailable'],
    [systemError('ECONNABORTED', 'write ECONNABORTED'), 'unavailable'],
    [systemError('EPIPE', 'write EPIPE'), 'unavailable'],
    [systemError('ESHUTDOWN', 'write ESHUTDOWN'), 'unavailable'],
    [noHost({ [HOST]: systemError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9042') }),
      'unavailable'],
    [noHost({}), 'unavailable'],
    [noHost(null), 'unavailable'],
    [overloaded, 'overloaded'],
    [response(CODE.unauthorized, 'User gateway has no MODIFY permission on <table telemetry.readings>'),
      'unauthorized'],
    [new errors.AuthenticationError('Provided username gateway and/or password are incorrect'), 'unauthorized'],
    [badCredentials, 'unauthorized'],
    [response(CODE.invalid, 'Batch too large'), 'invalid'],
    // Not an InvalidRequest in the Python driver either: "other" there too.
    [response(CODE.syntaxError, "line 1:0 no viable alternative at input 'INSER'"), 'other'],
    [response(CODE.configError, 'Cannot add already existing table'), 'other'],
    [response(CODE.alreadyExists, 'Table telemetry.readings already exists'), 'other'],
    [response(CODE.writeFailure, 'Operation failed - received 0 responses and 1 failures'), 'other'],
    [response(CODE.readFailure, 'Operation failed'), 'other'],
    [response(CODE.truncateError, 'Error during truncate'), 'other'],
    [response(CODE.serverError, 'java.lang.RuntimeException'), 'other'],
    [response(CODE.protocolError, 'Invalid or unsupported protocol version'), 'other'],
    [response(CODE.unprepared, 'Prepared query with ID 1 not found'), 'other'],
    [new errors.BusyConnectionError(HOST, 2048, 1), 'other'], // Python's NoConnectionsAvailable is "other" too
    [new errors.ArgumentError('Queries array should not be empty'), 'other'],
    [new errors.DriverInternalError('Unexpected response'), 'other'],
    [new TypeError('Expected Number, obtained undefined'), 'other'],
    [systemError('EHOSTUNREACH', 'connect EHOSTUNREACH 10.0.0.9:9042'), 'other'], // a plain OSError in Python
    [new Error('could not convert'), 'other'],
    [undefined, 'other'],
    ['a string', 'other'],
  ];
  for (const [error, kind] of cases) {
    const code = error?.code === undefined ? '' : ` ${error.code}`;
    it(`${error?.name ?? typeof error}${code} (${String(error?.message ?? error).slice(0, 50)}): ${kind}`, () => {
      assert.equal(errorKind(error), kind);
    });
  }
});

describe('NoHostAvailableError takes the kind its hosts agree on', () => {
  const cases = [
    [{ [HOST]: overloaded, '127.0.0.2:9042': overloaded }, 'overloaded'], // the retry policy tried each host
    [{ [HOST]: new errors.AuthenticationError('Provided username gateway and/or password are incorrect') },
      'unauthorized'], // how a refused login surfaces when the client connects
    [{ [HOST]: overloaded, '127.0.0.2:9042': socketClosed }, 'unavailable'], // hosts disagree
    [{ [HOST]: new TypeError('odd') }, 'unavailable'],
    [{ [HOST]: new errors.BusyConnectionError(HOST, 2048, 1) }, 'unavailable'],
    [{ [HOST]: noHost({ [HOST]: overloaded }) }, 'overloaded'],
  ];
  for (const [causes, kind] of cases) {
    it(`${Object.values(causes).map((e) => e.name).join(', ')}: ${kind}`, () => {
      assert.equal(errorKind(noHost(causes)), kind);
    });
  }
});

it("the kinds are the contract's label values", () => {
  const contract = JSON.parse(readFileSync(new URL('../../contract/metrics.json', import.meta.url), 'utf8'));
  const family = contract.metrics.find((metric) => metric.name === 'telemetry_gateway_write_errors_total');
  assert.deepEqual(ERROR_KINDS, family.labels.error);
});

// --- errors as the driver makes them ---------------------------------------------------------------------------

/** The error a client gets connecting to a server on 127.0.0.1 that handles each connection with serve. */
async function connectError(serve) {
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    serve(socket);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await connectErrorAt(server.address().port);
  } finally {
    server.close();
  }
}

async function connectErrorAt(port) {
  const client = new cassandra.Client({ contactPoints: [`127.0.0.1:${port}`], localDataCenter: 'datacenter1',
    socketOptions: { connectTimeout: 1000, readTimeout: 300 } });
  try {
    await client.connect();
  } catch (error) {
    return error;
  } finally {
    await client.shutdown();
  }
  throw new Error('connected');
}

/** A native protocol ERROR frame answering the request that starts with header (code, message). */
function errorFrame(header, code, message) {
  const text = Buffer.from(message);
  const frame = Buffer.alloc(9 + 6 + text.length);
  frame[0] = header[0] | 0x80; // the request's version, as a response
  frame.writeInt16BE(header.readInt16BE(2), 2); // its stream
  frame[4] = 0x00; // ERROR
  frame.writeInt32BE(6 + text.length, 5);
  frame.writeInt32BE(code, 9);
  frame.writeUInt16BE(text.length, 13);
  text.copy(frame, 15);
  return frame;
}

const answering = (code, message) => (socket) => socket.on('data', (request) => {
  socket.write(errorFrame(request, code, message));
});

describe('errors as the driver makes them', () => {
  it('nothing listening: unavailable', async () => {
    const port = await new Promise((resolve) => { // a port just freed: nothing listens there
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = server.address();
        server.close(() => resolve(free));
      });
    });
    const error = await connectErrorAt(port);
    assert.ok(error instanceof errors.NoHostAvailableError);
    assert.equal(errorKind(error), 'unavailable');
  });

  it('a node that never answers: timeout', async () => {
    const error = await connectError(() => {});
    assert.ok(Object.values(error.innerErrors)[0] instanceof errors.OperationTimedOutError);
    assert.equal(errorKind(error), 'timeout');
  });

  it('an overloaded node: overloaded', async () => {
    const error = await connectError(answering(CODE.overloaded, 'Server is in overloaded state'));
    assert.equal(errorKind(error), 'overloaded');
  });

  it('refused credentials: unauthorized', async () => {
    const error = await connectError(answering(CODE.badCredentials, 'Provided username and/or password are incorrect'));
    assert.equal(errorKind(error), 'unauthorized');
  });
});
