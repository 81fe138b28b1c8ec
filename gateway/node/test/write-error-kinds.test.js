// conditionOf reads the server's error code or the failure's condition off cassandra-driver 4.10's errors, as a
// failed request hands them over; kindOf's table is the contract's (vectors/error_kinds.jsonl, run by the
// contract-vectors test). The last cases get their errors from the driver itself, connecting to a port that
// refuses, one that stays silent and a fake node that answers with an error.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { describe, it } from 'node:test';

import cassandra from 'cassandra-driver';

import { ERROR_KINDS, conditionOf, errorKind } from '../src/write-error-kinds.js';

const { errors, types } = cassandra;
const CODE = types.responseErrorCodes;
const HOST = '127.0.0.1:9042';

const response = (code, message) => new errors.ResponseError(code, message);
const overloaded = response(CODE.overloaded, 'Server is in overloaded state. Cannot accept more requests');
const socketClosed = Object.assign(new errors.DriverError('Socket was closed'), { isSocketError: true });
/** An error of Node's net module, as the driver passes it on. */
const systemError = (code, message) => Object.assign(new Error(message), { code, syscall: 'connect' });
const noHost = (innerErrors) => new errors.NoHostAvailableError(innerErrors);

describe("each driver error's condition", () => {
  const cases = [
    [response(CODE.writeTimeout, 'Server timeout during batched write query at consistency LOCAL_QUORUM '
      + '(1 peer(s) acknowledged the write over 2 required)'), 0x1100],
    [response(CODE.syntaxError, "line 1:0 no viable alternative at input 'INSER'"), 0x2000],
    [response(CODE.alreadyExists, 'Table telemetry.readings already exists'), 0x2400],
    [response(0x7777, 'a code the driver does not know'), 0x7777],
    [new errors.OperationTimedOutError('The host 127.0.0.1:9042 did not reply before timeout 12000 ms', HOST),
      'request_timeout'],
    [new errors.DriverError('Connection timeout'), 'connect_timeout'], // connecting took longer than connectTimeout
    [systemError('ETIMEDOUT', 'connect ETIMEDOUT 10.0.0.9:9042'), 'connect_timeout'],
    [socketClosed, 'connection_closed'],
    [systemError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9042'), 'connection_refused'],
    [systemError('ECONNRESET', 'read ECONNRESET'), 'connection_closed'],
    [systemError('ECONNABORTED', 'write ECONNABORTED'), 'connection_closed'],
    [systemError('EPIPE', 'write EPIPE'), 'connection_closed'],
    [systemError('ESHUTDOWN', 'write ESHUTDOWN'), 'connection_closed'],
    [systemError('EHOSTUNREACH', 'connect EHOSTUNREACH 10.0.0.9:9042'), 'host_unreachable'],
    [systemError('ENETUNREACH', 'connect ENETUNREACH 10.0.0.9:9042'), 'host_unreachable'],
    [new errors.AuthenticationError('Provided username gateway and/or password are incorrect'),
      'authentication_refused'],
    [new errors.BusyConnectionError(HOST, 2048, 1), 'other'],
    [new errors.ArgumentError('Queries array should not be empty'), 'other'],
    [new errors.DriverInternalError('Unexpected response'), 'other'],
    [new TypeError('Expected Number, obtained undefined'), 'other'],
    [new Error('could not convert'), 'other'],
    [undefined, 'other'],
    ['a string', 'other'],
    [noHost({}), { noHostReachable: [] }],
    [noHost(null), { noHostReachable: [] }],
    [noHost({ [HOST]: overloaded, '127.0.0.2:9042': socketClosed }), { noHostReachable: [0x1001, 'connection_closed'] }],
    [noHost({ [HOST]: noHost({ [HOST]: overloaded }) }), { noHostReachable: [{ noHostReachable: [0x1001] }] }],
  ];
  for (const [error, condition] of cases) {
    const code = error?.code === undefined ? '' : ` ${error.code}`;
    it(`${error?.name ?? typeof error}${code} (${String(error?.message ?? error).slice(0, 50)})`, () => {
      assert.deepEqual(conditionOf(error), condition);
    });
  }
});

it('a write timeout is a timeout, hosts that disagree unavailable', () => {
  assert.equal(errorKind(response(CODE.writeTimeout, 'Server timeout')), 'timeout');
  assert.equal(errorKind(noHost({ [HOST]: overloaded, '127.0.0.2:9042': socketClosed })), 'unavailable');
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
