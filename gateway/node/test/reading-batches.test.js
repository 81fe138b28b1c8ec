// The statements' CQL is the contract's (gateway/contract/cassandra-writes.md), character for character, and their
// parameters go out in the wire form of their columns' CQL types (native protocol, "[value]" of each type):
// encoded by the pinned driver both ways it may encode them (by the prepared statement's column types, read here
// from schema/*.cql, and by its guess from the JS value when not prepared), compared with the bytes worked out by
// hand (hex below).

import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import cassandra from 'cassandra-driver';

import { latestBatches } from '../src/latest-rows.js';
import { CQL, dayChangesBatch, readingsBatch, sourceDayRequest } from '../src/reading-batches.js';
import { packValues } from '../src/reading-values.js';
import { utcDay, utcDayNumber } from '../src/timestamps.js';
import { LatestRow, planWrites } from '../src/write-plan.js';

const { Encoder } = cassandra;
const { LocalDate } = cassandra.types;
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const TS = 1_711_879_200_000; // 2024-03-31T10:00Z

/** {table: {column: CQL type}} from the schema's CREATE TABLE statements. */
function schemaColumns() {
  const tables = {};
  const dir = `${REPO}schema/`;
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.cql'))) {
    const text = readFileSync(dir + name, 'utf8').replace(/--.*$/gm, '');
    for (const [, table, body] of text.matchAll(/CREATE TABLE IF NOT EXISTS (\w+) \(([\s\S]*?)PRIMARY KEY/g)) {
      tables[table] = Object.fromEntries([...body.matchAll(/^\s*(\w+) (\w+),\s*$/gm)].map(([, c, type]) => [c, type]));
    }
  }
  return tables;
}

const COLUMNS = schemaColumns();

/** The CQL types of an INSERT's bind markers, in order: its columns', then USING TIMESTAMP's (bigint). */
function markerTypes(query) {
  const [, table, columns] = query.match(/^INSERT INTO (\w+) \(([^)]*)\) VALUES/);
  const types = columns.split(', ').map((column) => COLUMNS[table][column]);
  return / USING TIMESTAMP \?$/.test(query) ? [...types, 'bigint'] : types;
}

const encoder = new Encoder(4, {});

/** A row's parameters as the driver writes them: [prepared (schema types), unprepared (guessed)], hex. */
function wire({ query, params }) {
  const types = markerTypes(query);
  assert.equal(params.length, types.length, query);
  return [params.map((value, i) => encoder.encode(value, types[i]).toString('hex')),
    params.map((value) => encoder.encode(value).toString('hex'))];
}

function assertWire(statement, expected) {
  const [prepared, guessed] = wire(statement);
  assert.deepEqual(prepared, expected, statement.query);
  assert.deepEqual(guessed, expected, `${statement.query} (not prepared)`);
}

const frame = (id, source, ts, values) => ({ id, source, ts_ms: ts, received_ms: 0, ...packValues(values) });

describe('the CQL texts', () => {
  it("are the contract's (statements.cql)", () => {
    const contract = readFileSync(`${REPO}gateway/contract/statements.cql`, 'utf8');
    const declared = [...contract.matchAll(/^-- name: (\w+)\n([^;]+);/gm)].map(([, name, text]) => [name, text.trim()]);
    assert.deepEqual(declared, [['reading', CQL.reading], ['source_day', CQL.sourceDay], ['latest', CQL.latest],
      ['day_change', CQL.dayChange]]);
  });

  it('name only columns the schema has', () => {
    for (const query of Object.values(CQL)) assert.ok(markerTypes(query).every((type) => type), query);
    assert.deepEqual(markerTypes(CQL.reading), ['text', 'date', 'text', 'timestamp', 'double']);
    assert.deepEqual(markerTypes(CQL.latest), ['text', 'text', 'timestamp', 'double', 'bigint']);
  });
});

describe('readingsBatch', () => {
  const frames = [frame(1, 'G', TS, [['temp_in', 11.77], ['light', -0.0]]),
    frame(2, 'G', TS + 1, [['temp_in', 1e300], ['humidity', -3.25], ['light', 57.0]])];
  const [batch] = planWrites(frames, 250).batches;
  const statement = readingsBatch(batch);
  const rowStatements = (s) => [...s.rows.rows()].map((params) => ({ query: CQL.reading, params }));
  const queries = rowStatements(statement);

  it('is one UNLOGGED batch, a row per value: frames in order, values in their order', () => {
    assert.equal(statement.logged, false);
    assert.deepEqual(statement.queries.map(({ query }) => query), [CQL.reading]); // sent as one encoded item
    assert.deepEqual(statement.queries[0].params, queries[0].params); // routed by the first row
    assert.equal(statement.rows.count, batch.rows);
    assert.equal(queries.length, batch.rows);
    const rows = queries.map(({ params: [source, day, metric, ts, value] }) =>
      [source.toString(), day.readUInt32BE(0) - 2 ** 31, metric.toString(), Number(ts.readBigInt64BE(0)),
        value.readDoubleBE(0)]);
    const day = utcDayNumber(TS);
    assert.deepEqual(rows, [['G', day, 'temp_in', TS, 11.77], ['G', day, 'light', TS, -0],
      ['G', day, 'temp_in', TS + 1, 1e300], ['G', day, 'humidity', TS + 1, -3.25], ['G', day, 'light', TS + 1, 57]]);
    assert.equal(String(utcDay(TS)), '2024-03-31');
    assert.ok(Object.is(rows[1][4], -0));
  });

  it("writes text, date, text, timestamp (ms), the spool's double", () => {
    assertWire(queries[0], ['47', '80004d65', '74656d705f696e', '0000018e93f39d00', '40278a3d70a3d70a']);
    assertWire(queries[1], ['47', '80004d65', '6c69676874', '0000018e93f39d00', '8000000000000000']);
    assertWire(queries[2], ['47', '80004d65', '74656d705f696e', '0000018e93f39d01', '7e37e43c8800759c']);
  });

  it("a value is the frame's 8 bytes, as stored", () => {
    const values = queries.map(({ params }) => params[4]);
    assert.ok(values.every((value) => Buffer.isBuffer(value) && value.length === 8));
    assert.deepEqual(Buffer.concat(values), Buffer.concat(frames.map((f) => f.vals)));
  });

  it('a day before 1970 is its UTC date', () => {
    const [early] = planWrites([frame(1, 'G', -1, [['a', 1]])], 250).batches;
    assertWire(rowStatements(readingsBatch(early))[0], ['47', '7fffffff', '61', 'ffffffffffffffff', '3ff0000000000000']);
  });
});

describe('sourceDayRequest', () => {
  it('is one row: day, source', () => {
    const request = sourceDayRequest('G', utcDay(TS));
    assert.equal(request.query, CQL.sourceDay);
    assert.equal(request.queries, undefined);
    assertWire(request, ['80004d65', '47']);
  });
});

describe('dayChangesBatch', () => {
  const now = new Date(Date.UTC(2026, 2, 29, 10, 59, 59, 999));
  const statement = dayChangesBatch([['G', new LocalDate(2026, 3, 28)], ['H', utcDay(TS)]], now);

  it('is one UNLOGGED batch in the partition of the UTC hour: bucket, day, source, written_at', () => {
    assert.equal(statement.logged, false);
    assert.deepEqual(statement.queries.map(({ query, params: [bucket, day, source, writtenAt] }) =>
      [query, bucket.toISOString(), String(day), source, writtenAt.getTime()]),
    [[CQL.dayChange, '2026-03-29T10:00:00.000Z', '2026-03-28', 'G', now.getTime()],
      [CQL.dayChange, '2026-03-29T10:00:00.000Z', '2024-03-31', 'H', now.getTime()]]);
  });

  it('writes timestamp, date, text, timestamp', () => {
    assertWire(statement.queries[1], ['0000019d39093d00', '80004d65', '48', '0000019d39402b7f']);
  });

  it('is stamped now unless told', () => {
    const before = Date.now();
    const [{ params: [, , , writtenAt] }] = dayChangesBatch([['G', utcDay(TS)]]).queries;
    assert.ok(writtenAt.getTime() >= before && writtenAt.getTime() <= Date.now());
  });
});

describe('the latest rows', () => {
  it('write text, text, timestamp, double, USING TIMESTAMP in µs (bigint)', () => {
    const [batch] = latestBatches([new LatestRow('G', 'temp', TS, 20.5)]);
    assertWire(batch.queries[0], ['47', '74656d70', '0000018e93f39d00', '4034800000000000', '000614f1ef9d4800']);
    const [early] = latestBatches([new LatestRow('G', 'temp', -1, -0.0)]);
    assertWire(early.queries[0], ['47', '74656d70', 'ffffffffffffffff', '8000000000000000', 'fffffffffffffc18']);
  });

  it('keep the write timestamp exact where a Number of µs would round', () => {
    const tsMs = 72_057_594_037_929; // × 1000 is past 2^56: a double holds only multiples of 16 there
    assert.notEqual(BigInt(tsMs * 1000), BigInt(tsMs) * 1000n);
    const [batch] = latestBatches([new LatestRow('G', 'temp', tsMs, 1)]);
    assert.equal(wire(batch.queries[0])[0][4], '0100000000000428');
    assert.equal(BigInt.asIntN(64, 0x0100000000000428n), BigInt(tsMs) * 1000n);
  });
});
