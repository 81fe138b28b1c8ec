// The sender: spooled frames → Cassandra, acknowledged back to the spool only once written.
//
// Frames are taken from the spool in id order in chunks, planned into single-partition UNLOGGED batches plus the
// `latest` and `source_days` writes they imply, and sent asynchronously (RequestPump) with a bound on requests in
// flight. Taking stops while a chunk's worth of requests is ready, waiting for a mark or waiting for a retry
// (RetrySchedule), so an unreachable cluster stops the taking, not the reading, and memory stays bounded.
//
// Day marks first (gateway/contract/day-marks.md): a readings request waits until its day has a fresh mark
// (MarkGate, mark-gate.js). When all of a chunk's requests succeeded, its frames are acknowledged to the spool
// (WriteLedger). `latest` rows are coalesced (LatestRows) and written every LATEST_FLUSH_MS and at shutdown.

import { backoffS } from './backoff.js';
import { contractNumber } from './contract-constants.js';
import { LONG_INTERVAL_S, RateLimitedLog, event } from './logs.js';
import { MarkGate } from './mark-gate.js';
import { LatestRows, latestBatches } from './latest-rows.js';
import { readingsBatch, sourceDayRequest } from './reading-batches.js';
import { Request, RequestPump } from './request-pump.js';
import { RetrySchedule } from './retry-schedule.js';
import { conditionName, conditionOf, firstLine, kindOf } from './write-error-kinds.js';
import { Chunk, MarkWrite, WriteLedger } from './write-ledger.js';
import { planWrites } from './write-plan.js';

// What an operator does about a failed connect, by error kind (the same words in every gateway).
const CONNECT_ACTIONS = {
  unauthorized: 'check the Cassandra credentials (credentials_file, read again at each attempt, or '
    + 'TELEMETRY_CASSANDRA_USERNAME/_PASSWORD); retrying; frames are kept in the spool',
  other: 'retrying; frames are kept in the spool',
};

// `latest` is a view, not a record: written coalesced, a write per source every few seconds. At low rates a chunk
// holds a frame or two, and a write of it per chunk would multiply the requests a small gateway sends.
const DAMAGED_ROW_ACTION = 'a frame row in the spool failed its checksum (a damaged SD card?): it was not sent and '
  + 'was deleted; check the card';
const LATEST_FLUSH_MS = contractNumber('latest_flush_ms');
const DRAIN_TIMEOUT_MS = contractNumber('sender_drain_ms'); // at a stop, the most the writes in flight are waited for
const CHUNK_FRAMES_MIN = contractNumber('chunk_frames_min');
// The longest the loop sleeps with nothing to do: answers, new frames and a stop wake it at once, timers (flushes,
// retries) when due. A Pi's gateway is idle most of the time, and every wake-up costs CPU.
const IDLE_MS = 1000;
const BUSY_WAIT_MS = 50; // while the spool may hold more than was taken

export class Sender {
  /** onLink(connected, writeOk): called when either changes (connected to Cassandra; its most recent write
   * succeeded), so that the spool holds frames in memory only while Cassandra keeps up (spool/policies.js). */
  constructor({ spool, clientFactory, keyspace, batchRows, maxInFlight, retryMaxS, metrics, onAcked,
    onLink = () => {} }) {
    this.spool = spool;
    this.clientFactory = clientFactory;
    this.keyspace = keyspace;
    this.batchRows = batchRows;
    this.retryMaxS = retryMaxS;
    this.metrics = metrics;
    this.onAcked = onAcked;
    this.onLink = onLink;
    this.linkState = [false, true]; // [connected, writeOk] as last told
    this.lastError = null; // [error kind, wall ms] of the last failure: the status page's
    // wall ms since which Cassandra is down (the start until the first connection), null while up: /healthz
    this.downSinceMs = Date.now();
    this.log = new RateLimitedLog();
    // spool_frame_damaged: logs.md, one line a minute.
    this.damageLog = new RateLimitedLog({ intervalS: LONG_INTERVAL_S });
    this.client = null;
    this.connectAttempts = 0;
    this.wakeUp = null;
    this.stopping = false;
    this.pump = new RequestPump(maxInFlight, () => this.wake(), (request) => this.beforeSend(request));
    this.retries = new RetrySchedule(retryMaxS);
    this.ledger = new WriteLedger();
    this.gate = new MarkGate(this.pump, this.ledger);
    this.latest = new LatestRows();
    this.latestFlushed = performance.now();
    this.cursor = 0; // highest spool id taken; everything above it is new
    // Whether the spool may hold frames above the cursor: set by the ingest's nudge and by a full take.
    this.more = true;
    this.chunkFrames = Math.max(CHUNK_FRAMES_MIN, Math.floor((maxInFlight * batchRows) / 2));
    this.heartbeat = performance.now();
    this.done = null;
  }

  /** New frames were spooled. */
  nudge() {
    this.more = true;
    this.wake();
  }

  wake() {
    if (this.wakeUp !== null) this.wakeUp();
  }

  get idle() {
    return this.ledger.idle;
  }

  /** Tells onLink of a change of the link's state. */
  cassandraUp(up) {
    this.metrics.cassandra_up.set(up);
    if (up) this.downSinceMs = null;
    else this.downSinceMs ??= Date.now();
  }

  link(connected, writeOk) {
    if (connected === this.linkState[0] && writeOk === this.linkState[1]) return;
    this.linkState = [connected, writeOk];
    this.onLink(connected, writeOk);
  }

  start() {
    this.done = this.run();
  }

  /** Finishes the writes in flight (bounded wait); resolves when the sender has shut its client down. */
  stop() {
    this.stopping = true;
    this.wake();
    return this.done;
  }

  wait(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => { this.wakeUp = null; resolve(); }, ms);
      this.wakeUp = () => { clearTimeout(timer); this.wakeUp = null; resolve(); };
    });
  }

  async run(drainTimeoutMs = DRAIN_TIMEOUT_MS) {
    try {
      while (!this.stopping) {
        this.heartbeat = performance.now();
        if (this.client === null && !(await this.connect())) {
          if (!this.stopping) await this.wait(backoffS(this.connectAttempts, this.retryMaxS) * 1000);
          continue;
        }
        await this.step(true);
      }
      const deadline = performance.now() + drainTimeoutMs;
      if (this.client !== null) this.flushLatest();
      while (!this.idle && performance.now() < deadline && this.client !== null) await this.step(false);
      if (!this.idle) {
        event('warning', 'shutdown_with_unacknowledged_writes', { requests: this.ledger.outstanding,
          note: 'their frames stay in the spool and are sent at the next start' });
      }
    } finally {
      if (this.client !== null) await this.client.shutdown().catch(() => {});
    }
  }

  async connect() {
    this.connectAttempts += 1;
    let client = null;
    try {
      // Inside the try: the factory reads the credentials file, which may be unreadable or incomplete right now.
      client = this.clientFactory();
      await client.connect();
    } catch (error) { // unusable credentials, unreachable, auth, schema missing: retried; the spool keeps the frames
      if (client !== null) await client.shutdown().catch(() => {});
      this.cassandraUp(0);
      this.link(false, this.linkState[1]);
      const condition = conditionOf(error);
      const kind = kindOf(condition);
      this.lastError = [kind, Date.now()];
      this.log.event('warning', 'cassandra_unreachable', { condition: conditionName(condition), kind,
        detail: firstLine(error), action: CONNECT_ACTIONS[kind] ?? CONNECT_ACTIONS.other });
      return false;
    }
    this.client = client;
    this.connectAttempts = 0;
    this.cassandraUp(1);
    this.link(true, true); // a new client: no write of it has failed
    event('info', 'cassandra_connected', { keyspace: this.keyspace,
      hosts: client.hosts.values().map((host) => host.address).join(',') });
    return true;
  }

  async step(takeNew) {
    await this.wait(this.waitMs(performance.now()));
    this.settle();
    const now = performance.now();
    this.pump.add(this.retries.due(now), true);
    if (takeNew) {
      this.take();
      if (this.latest.size && now - this.latestFlushed >= LATEST_FLUSH_MS) this.flushLatest();
    }
    this.pump.send(this.client);
  }

  /** How long the loop may sleep before a timer is due. */
  waitMs(now) {
    let wait = this.more ? BUSY_WAIT_MS : IDLE_MS;
    if (this.latest.size) wait = Math.min(wait, this.latestFlushed + LATEST_FLUSH_MS - now);
    return Math.max(0, Math.min(wait, this.retries.nextDueMs(now)));
  }

  /** Frame rows that failed their checksum: not sent, deleted (spool.md, "Row checksums"). */
  reportDamaged(rows) {
    for (const row of rows) {
      this.metrics.spool_invalid_frames.inc();
      this.damageLog.event('error', 'spool_frame_damaged', { id: row.id, source: row.source, ts_ms: row.ts_ms,
        action: DAMAGED_ROW_ACTION });
    }
  }

  take() {
    // Keep one chunk's worth of requests ready; the spool holds the rest (memory stays bounded).
    while (this.more && this.pump.waiting + this.gate.parked + this.retries.size < this.pump.maxInFlight) {
      this.more = false; // before the query: a nudge from here on sets it again
      const frames = this.spool.take(this.cursor, this.chunkFrames);
      const damaged = this.spool.damagedRows();
      this.reportDamaged(damaged);
      // Rows left out (deleted) may leave a full chunk's worth behind them.
      if (damaged.length > 0 || frames.length === this.chunkFrames) this.more = true;
      if (frames.length === 0) continue;
      this.cursor = frames[frames.length - 1].id;
      const plan = planWrites(frames, this.batchRows);
      const rows = plan.batches.reduce((sum, batch) => sum + batch.rows, 0);
      const receipts = new Map(); // the frames of a read share their receipt time: a few entries per chunk
      for (const frame of frames) receipts.set(frame.received_ms, (receipts.get(frame.received_ms) ?? 0) + 1);
      const chunk = new Chunk(frames[0].id, frames[frames.length - 1].id, receipts, rows, plan.days);
      const requests = plan.batches.map((batch) => new Request(0, readingsBatch(batch), chunk, 0,
        [batch.source, batch.day]));
      this.latest.merge(plan.latest);
      for (const [source, day] of plan.days) {
        if (!this.ledger.isKnownDay(source, day)) requests.push(new Request(0, sourceDayRequest(source, day), chunk));
      }
      this.ledger.expect(requests.length, chunk);
      this.pump.add(this.gate.hold(requests, plan.days, performance.now()));
    }
  }

  flushLatest() {
    this.latestFlushed = performance.now();
    const batches = latestBatches(this.latest.take());
    this.ledger.expect(batches.length);
    this.pump.add(batches.map((batch) => new Request(0, batch, null)));
    this.pump.send(this.client);
  }

  /** The pump's last word before each attempt (mark-gate.js). */
  beforeSend(request) {
    return this.gate.beforeSend(request, performance.now(), new Date());
  }

  settle() {
    const now = performance.now();
    for (const [request, error] of this.pump.answers()) {
      if (error === null) {
        this.metrics.write_latency.observe((now - request.sentAt) / 1000);
        this.cassandraUp(1);
        this.link(true, true);
        const written = this.ledger.succeeded(request.owner);
        if (written !== null) {
          this.countWritten(written);
          this.onAcked([written.firstId, written.lastId]);
        } else if (request.owner instanceof MarkWrite) {
          this.gate.marked(request.owner, performance.now());
        }
      } else {
        const condition = conditionOf(error);
        const kind = kindOf(condition);
        this.link(this.linkState[0], false);
        this.metrics.write_errors.inc({ error: kind });
        this.lastError = [kind, Date.now()];
        if (kind === 'unavailable' || kind === 'timeout' || kind === 'overloaded') {
          this.cassandraUp(error?.name === 'NoHostAvailableError' ? 0 : 1);
        }
        this.retries.retryLater(request, now);
        this.log.event('warning', 'write_failed', { key: kind, error: kind, condition: conditionName(condition),
          detail: firstLine(error), attempts: request.attempts,
          action: 'retrying with backoff' });
      }
    }
    this.metrics.requests_in_flight.set(this.pump.inFlight);
  }

  countWritten(chunk) {
    this.metrics.rows_written.inc(chunk.rows);
    const nowMs = Date.now();
    let frames = 0;
    for (const [receivedMs, count] of chunk.receipts) { // one observation per read, not per frame
      this.metrics.delivery_latency.observeMany(Math.max(0, (nowMs - receivedMs) / 1000), count);
      frames += count;
    }
    this.metrics.frames_written.inc(frames);
    chunk.receipts = new Map(); // counted once
  }
}
