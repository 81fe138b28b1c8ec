// A readings batch sent as EncodedRows must be, byte for byte, the message the pinned driver writes for the same
// rows sent the public way (a prepared item per row), in every protocol version and with every option that changes
// the message. (The public path's message is written by the driver's own code, which the wrapper leaves to it.)

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';

import cassandra from 'cassandra-driver';

import { EncodedRows } from '../src/encoded-batch.js';
import { CQL, readingsBatch } from '../src/reading-batches.js';
import { packValues } from '../src/reading-values.js';
import { planWrites } from '../src/write-plan.js';

const require = createRequire(import.meta.url);
const { BatchRequest } = require('cassandra-driver/lib/requests.js');
const { ExecutionOptions } = require('cassandra-driver/lib/execution-options.js');

const { Encoder, types } = cassandra;
const QUERY_ID = Buffer.from('0123456789abcdef0123456789abcdef', 'hex');
const META = { columns: ['text', 'date', 'text', 'timestamp', 'double'].map((name) => ({ type: { code: types.dataTypes[name] } })) };
const TS = 1_711_879_200_000;

class Options extends ExecutionOptions {
  constructor(overrides = {}) {
    super();
    this.o = { consistency: types.consistencies.localQuorum, timestamp: types.Long.fromString('1711879200000123'),
      serialConsistency: undefined, keyspace: undefined, tracing: false, payload: undefined, ...overrides };
  }

  getOrGenerateTimestamp() { return this.o.timestamp; }
  getHints() { return undefined; }
  isBatchCounter() { return false; }
  isBatchLogged() { return false; }
  isQueryTracing() { return this.o.tracing; }
  getCustomPayload() { return this.o.payload; }
  getConsistency() { return this.o.consistency; }
  getSerialConsistency() { return this.o.serialConsistency; }
  getKeyspace() { return this.o.keyspace; }
}

function frame(id, source, tsMs, values) {
  return { id, source, ts_ms: tsMs, received_ms: tsMs, ...packValues(values) };
}

const FRAMES = [frame(1, 'greenhouse-é', TS, [['temp_in', 11.77], ['light', -0.0]]),
  frame(2, 'greenhouse-é', TS + 1, [['temp_in', 1e300], ['humidity', -3.25], ['light', 57.0]]),
  frame(3, 'greenhouse-é', TS + 3_600_000, [['temp_in', NaN]])];

/** [the public path's message, the encoded path's message] for the same rows and options. */
function messages(statement, version, options) {
  const publicItems = [...statement.rows.rows()].map((params) => ({ query: CQL.reading, params, queryId: QUERY_ID,
    meta: META }));
  const [item] = statement.queries;
  const encoded = new BatchRequest([{ ...item, queryId: QUERY_ID, meta: META }], options);
  const encoder = new Encoder(version, {});
  return [new BatchRequest(publicItems, options).write(encoder, 7), encoded.write(encoder, 7)];
}

describe('EncodedRows in a BatchRequest', () => {
  const [batch] = planWrites(FRAMES, 250).batches;
  const statement = readingsBatch(batch);

  for (const version of [3, 4, 5]) {
    it(`writes the public path's bytes, protocol v${version}`, () => {
      const [expected, got] = messages(statement, version, new Options());
      assert.equal(got.toString('hex'), expected.toString('hex'));
    });
  }

  const variants = {
    'no client timestamp': { timestamp: null },
    'a serial consistency': { serialConsistency: types.consistencies.localSerial },
    'a keyspace in the request': { keyspace: 'telemetry' },
    'tracing and a custom payload': { tracing: true, payload: { k: Buffer.from('v') } },
    'consistency ONE': { consistency: types.consistencies.one },
  };
  for (const [name, overrides] of Object.entries(variants)) {
    it(`writes the public path's bytes with ${name}`, () => {
      for (const version of [4, 5]) {
        const [expected, got] = messages(statement, version, new Options(overrides));
        assert.equal(got.toString('hex'), expected.toString('hex'), `v${version}`);
      }
    });
  }

  it('holds every row once, in order (6 rows of 3 frames)', () => {
    assert.equal(statement.rows.count, 6);
    const [expected] = messages(statement, 4, new Options());
    assert.equal(expected.readUInt16BE(9 + 1), 6); // after the header and the batch type
  });

  it('is written again for a new query id (a re-prepare), not from the old bytes', () => {
    const frames = [{ ts_ms: 0, vals: Buffer.alloc(8), metrics: 'a,b' }, { ts_ms: 1, vals: Buffer.alloc(8, 1),
      metrics: 'a,b' }];
    const rows = new EncodedRows(CQL.reading, Buffer.from('G'), Buffer.from('80004d65', 'hex'),
      frames.map((f) => ({ ...f, vals: Buffer.concat([f.vals, f.vals]) })), () => [Buffer.from('a'), Buffer.from('b')]);
    const before = [...rows.rows()];
    const first = Buffer.from(rows.encode(QUERY_ID));
    for (const other of [Buffer.from('ff'.repeat(16), 'hex'), Buffer.from('ee'.repeat(20), 'hex'), QUERY_ID]) {
      const again = rows.encode(other);
      assert.equal(again.readUInt16BE(1), other.length);
      assert.equal(again.subarray(3, 3 + other.length).toString('hex'), other.toString('hex'));
      assert.deepEqual([...rows.rows()], before); // the same rows, only the id differs
    }
    assert.equal(rows.encode(QUERY_ID).toString('hex'), first.toString('hex'));
  });
});

// encoded-batch.js uses modules of cassandra-driver that are not its public API (lib/requests.js, lib/writers.js,
// lib/types/index.js). They are pinned here by content: a driver upgrade that changes any of them fails this test,
// and whoever upgrades re-reads encoded-batch.js against the new code, reruns the byte tests above and gateway/bench,
// and then records the new hashes.
describe("the driver's private modules encoded-batch.js relies on", () => {
  const PINNED = {
    version: '4.10.0',
    'lib/requests.js': 'a822d6c6f459927440049ed40c3ff703e09a75f4e5eb9badf232a6d5ecb72ecd',
    'lib/writers.js': '2d63d1e9375cb20957469604eb721b878e22e0d5b3d9c5df351e8a0dac45d21f',
    'lib/types/index.js': '11a6fbb58657c22d814f51b85d2dd72a89a818c9f1e73f5148136df6cf90fcb4',
  };

  it('are those of the pinned driver, byte for byte', () => {
    const root = dirname(require.resolve('cassandra-driver/package.json'));
    assert.equal(require('cassandra-driver/package.json').version, PINNED.version);
    for (const [file, hash] of Object.entries(PINNED).filter(([key]) => key !== 'version')) {
      assert.equal(createHash('sha256').update(readFileSync(join(root, file))).digest('hex'), hash, file);
    }
  });
});
