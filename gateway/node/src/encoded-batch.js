// Readings batches whose rows go out already in wire form, for the pinned cassandra-driver 4.10.0.
//
// The public path, client.batch() with one {query, params} per row, costs per row a prepared-statement lookup
// (awaited), and a dozen small Buffers that BatchRequest.write() makes one by one and then joins: with the value
// conversions, most of the gateway's CPU. The rows of a readings batch share one partition and differ only in
// metric, ts and value, so their bytes are joined here in one Buffer from a head made once per batch, the metric's
// bytes, the frame's timestamp, and the value's 8 bytes exactly as the spool stores them.
//
// Such a batch is sent as client.batch([{query, params}]) with a single item: the statement is prepared once, and
// the driver routes by the item's params, the batch's first row. The params carry the whole batch (ENCODED_ROWS),
// and BatchRequest.write, wrapped here, writes its rows where it would write that one item's; everything else in
// the message (type, consistency, flags, timestamp, keyspace, tracing, payload) is written as the driver writes it.
// Retries, routing and re-preparing stay the driver's. A test compares the bytes with the public path's.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { BatchRequest } = require('cassandra-driver/lib/requests.js');
const { FrameWriter } = require('cassandra-driver/lib/writers.js');
const { protocolVersion, opcodes, frameFlags } = require('cassandra-driver/lib/types/index.js');

const ENCODED_ROWS = Symbol('encoded readings rows');
const PREPARED_KIND = 1; // a batch row that names a prepared statement by id
const VALUE_COUNT = 5; // source, day, metric, ts, value
const DOUBLE_BYTES = 8;
const TIMESTAMP_BYTES = 8;
// The flags after a batch's consistency (native protocol v3-v5, section 4.1.7), as the driver sets them.
const WITH_SERIAL_CONSISTENCY = 0x10;
const WITH_DEFAULT_TIMESTAMP = 0x20;
const WITH_KEYSPACE = 0x80;

/** A CQL timestamp's 8 bytes written at `at`: signed ms since the epoch, big-endian. Returns the end. */
function writeTimestamp(bytes, ms, at) {
  const high = Math.floor(ms / 2 ** 32);
  bytes.writeInt32BE(high, at);
  return bytes.writeUInt32BE(ms - high * 2 ** 32, at + 4);
}

// The id each query was last prepared with, as seen by write(): rows are encoded with it when made, so a batch goes
// out as it was encoded; only after a statement was prepared anew (another id) are a batch's ids rewritten once.
const LAST_QUERY_ID = new Map(); // a handful of queries
const NOT_YET_PREPARED = Buffer.alloc(16); // Cassandra's ids are 16 bytes (an MD5)

/**
 * The rows of one readings partition, encoded when made: for each frame, for each of its metrics, [source, day,
 * metric, ts, value]. The source and day come in wire form (Buffers); a frame is a spool row {ts_ms, metrics,
 * vals}, its i-th metric's bytes metricBytes(frame.metrics)[i] and its value vals[8i, 8i + 8), copied as they are.
 * The frames are not kept: what waits for Cassandra is one Buffer per batch, not objects per frame that would
 * outlive the young generation's collections.
 */
export class EncodedRows {
  constructor(query, source, day, frames, metricBytes) {
    this.query = query;
    this.queryId = LAST_QUERY_ID.get(query) ?? NOT_YET_PREPARED;
    const head = Buffer.allocUnsafe(1 + 2 + this.queryId.length + 2 + 4 + source.length + 4 + day.length);
    let at = head.writeUInt8(PREPARED_KIND, 0);
    at = head.writeUInt16BE(this.queryId.length, at);
    at += this.queryId.copy(head, at);
    at = head.writeUInt16BE(VALUE_COUNT, at);
    at = head.writeInt32BE(source.length, at);
    at += source.copy(head, at);
    at = head.writeInt32BE(day.length, at);
    day.copy(head, at);
    const tail = 4 + TIMESTAMP_BYTES + 4 + DOUBLE_BYTES;
    let count = 0;
    let length = 0;
    for (const frame of frames) {
      for (const metric of metricBytes(frame.metrics)) {
        count += 1;
        length += head.length + 4 + metric.length + tail;
      }
    }
    const bytes = Buffer.allocUnsafe(length);
    const starts = new Uint32Array(count + 1); // where each row begins, and the end
    let row = 0;
    at = 0;
    for (const { ts_ms: tsMs, vals, metrics } of frames) {
      const names = metricBytes(metrics);
      for (let i = 0; i < names.length; i++) {
        const metric = names[i];
        starts[row++] = at;
        at += head.copy(bytes, at);
        at = bytes.writeInt32BE(metric.length, at);
        at += metric.copy(bytes, at);
        at = bytes.writeInt32BE(TIMESTAMP_BYTES, at);
        at = writeTimestamp(bytes, tsMs, at);
        at = bytes.writeInt32BE(DOUBLE_BYTES, at);
        at += vals.copy(bytes, at, i * DOUBLE_BYTES, (i + 1) * DOUBLE_BYTES);
      }
    }
    starts[row] = at;
    this.count = count;
    this.bytes = bytes;
    this.starts = starts;
  }

  /** Each row's values as the public path would bind them, read back from the encoded rows. */
  *rows() {
    for (let row = 0; row < this.count; row++) {
      let at = this.starts[row] + 1;
      at += 2 + this.bytes.readUInt16BE(at) + 2; // the query id, the value count
      const values = [];
      for (let i = 0; i < VALUE_COUNT; i++) {
        const length = this.bytes.readInt32BE(at);
        values.push(this.bytes.subarray(at + 4, at + 4 + length));
        at += 4 + length;
      }
      yield values;
    }
  }

  /** The rows as a batch's body writes them for the prepared statement queryId: as encoded, or, for another
   * id (prepared anew), rewritten once with it. */
  encode(queryId) {
    if (this.queryId.equals(queryId)) return this.bytes;
    const oldHead = 1 + 2 + this.queryId.length;
    const bytes = Buffer.allocUnsafe(this.bytes.length + this.count * (queryId.length - this.queryId.length));
    const starts = new Uint32Array(this.count + 1);
    let at = 0;
    for (let row = 0; row < this.count; row++) {
      starts[row] = at;
      at = bytes.writeUInt8(PREPARED_KIND, at);
      at = bytes.writeUInt16BE(queryId.length, at);
      at += queryId.copy(bytes, at);
      at += this.bytes.copy(bytes, at, this.starts[row] + oldHead, this.starts[row + 1]);
    }
    starts[this.count] = at;
    this.queryId = queryId;
    this.bytes = bytes;
    this.starts = starts;
    return bytes;
  }
}

/** The one item to pass to client.batch() for these rows. */
export function encodedBatchItem(rows) {
  const params = rows.rows().next().value; // the first row's: the driver routes the batch by them
  Object.defineProperty(params, ENCODED_ROWS, { value: rows });
  return { query: rows.query, params };
}

const publicWrite = BatchRequest.prototype.write;

/** BatchRequest.write as the driver has it, except that a batch of EncodedRows writes them as its rows. */
function write(encoder, streamId) {
  const rows = this.queries?.length === 1 ? this.queries[0].params?.[ENCODED_ROWS] : undefined;
  if (rows === undefined || !this.queries[0].queryId) return publicWrite.call(this, encoder, streamId);
  const frameWriter = new FrameWriter(opcodes.batch);
  let headerFlags = this.options.isQueryTracing() ? frameFlags.tracing : 0;
  if (this.options.getCustomPayload()) {
    headerFlags |= frameFlags.customPayload;
    frameWriter.writeCustomPayload(this.options.getCustomPayload());
  }
  frameWriter.writeByte(this.type);
  const { query, queryId } = this.queries[0];
  if (LAST_QUERY_ID.get(query) !== queryId) LAST_QUERY_ID.set(query, queryId);
  frameWriter.writeShort(rows.count);
  frameWriter.add(rows.encode(queryId));
  frameWriter.writeShort(this.options.getConsistency());
  const version = encoder.protocolVersion;
  if (protocolVersion.supportsTimestamp(version)) {
    const keyspace = this.options.getKeyspace() && protocolVersion.supportsKeyspaceInRequest(version);
    const serialConsistency = this.options.getSerialConsistency();
    const timestamp = this.timestamp;
    const flags = (serialConsistency ? WITH_SERIAL_CONSISTENCY : 0)
      | (timestamp !== null && timestamp !== undefined ? WITH_DEFAULT_TIMESTAMP : 0)
      | (keyspace ? WITH_KEYSPACE : 0);
    if (protocolVersion.uses4BytesQueryFlags(version)) frameWriter.writeInt(flags);
    else frameWriter.writeByte(flags);
    if (serialConsistency) frameWriter.writeShort(serialConsistency);
    if (flags & WITH_DEFAULT_TIMESTAMP) frameWriter.writeLong(timestamp);
    if (keyspace) frameWriter.writeString(this.options.getKeyspace());
  }
  this.length = frameWriter.bodyLength;
  return frameWriter.write(version, streamId, headerFlags);
}

if (BatchRequest.prototype.write !== write) BatchRequest.prototype.write = write;
