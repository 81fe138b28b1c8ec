// The running gateway: inputs → ingest (spool) → sender (Cassandra) on one event loop, with an orderly stop
// (gateway/contract/process.md).
//
// Stop order on SIGTERM, SIGINT or SIGHUP: inputs stop reading; the ingest spools what they handed over; the
// sender finishes the writes in flight (bounded wait) and their acknowledgements are committed; the spool is
// closed. Frames not yet written stay in the spool and go out at the next start.
//
// A stage that fails with an unexpected error (the ingest's step, the sender's loop: a bug) is logged as stage_died
// with its stack and stops the gateway the same orderly way, with exit status 1 so that the service manager
// restarts it; every frame held in memory is still committed (gateway/contract/spool.md, "Every stop keeps what was
// read"). The last line, gateway_stopped, counts the frames in the spool file and those read and lost.

import { Alerting } from './alerting.js';
import { backoffS } from './backoff.js';
import { buildClient } from './cassandra-session.js';
import { contractNumber } from './contract-constants.js';
import { Credits, SERIAL_CREDITS, STREAM_CREDITS } from './credits.js';
import { Ingest } from './ingest.js';
import { LineHandler } from './line-handler.js';
import { SerialInput } from './serial-input.js';
import { StreamInput } from './stream-input.js';
import { ERROR_CHARS, LONG_INTERVAL_S, RateLimitedLog, event } from './logs.js';
import { createMetrics } from './metrics.js';
import { startStatusServer } from './status-server.js';
import { lineDecoder } from './room-csv.js';
import { Sender } from './sender.js';
import { Spool } from './spool/index.js';
import { reportDamage } from './spool-damage.js';
import { StatusPage } from './status-page.js';
import { SystemdNotifier } from './systemd-notify.js';
import { IMPLEMENTATION, VERSION } from './version.js';

// A sender whose loop has not turned for this long is stuck: stop feeding the watchdog.
const STALL_MS = contractNumber('stage_stall_ms');
// With fsync = batch or deferred, checkpoints only keep the WAL small (deferred: rarely).
const CHECKPOINT_MS = contractNumber('checkpoint_period_ms');
const SPOOL_OPEN_RETRY_MS = contractNumber('spool_open_retry_ms');
// At stop, how long a stuck input is waited for (process.md: the stop must go on).
const INPUTS_STOP_MS = contractNumber('inputs_stop_ms');
// At stop, how long the ingest gets to take what the inputs handed over.
const INPUTS_DRAIN_MS = contractNumber('inputs_drain_ms');

// What the last run's crash (SIGKILL, power cut) may have cost, per fsync policy (gateway/contract/spool.md).
const UNCLEAN_STOP_ACTIONS = Object.freeze({
  deferred: 'the last run did not stop cleanly: frames it read in its last fsync_interval_ms that Cassandra '
    + "had not acknowledged may be missing; seq gaps from each source's last stored seq are counted in "
    + 'frames_possibly_lost',
  batch: 'the last run did not stop cleanly: only frames read in its last few ms may be missing; seq gaps are '
    + 'counted in frames_possibly_lost',
  interval: 'the last run did not stop cleanly: after a power cut, frames of its last fsync_interval_ms may be '
    + 'missing; seq gaps are counted in frames_possibly_lost',
});

/** TELEMETRY_GATEWAY_FAILPOINT=ingest_after_frames:N, the conformance harness's test hook (spool.md, "Every stop
 * keeps what was read"), read once at start: N, or null (unset, or another failpoint). */
export function failpointFrames(env = process.env) {
  const [name, count] = (env.TELEMETRY_GATEWAY_FAILPOINT ?? '').split(':');
  if (name !== 'ingest_after_frames') return null;
  if (!/^[0-9]+$/.test(count ?? '')) {
    throw new Error('TELEMETRY_GATEWAY_FAILPOINT: ingest_after_frames:N wants a count');
  }
  return Number(count);
}

/** A stage failed with an unexpected error (a bug): its stack, then the event line. */
function reportStageDied(stage, error) {
  process.stderr.write(`Error in stage ${stage}: ${error?.stack ?? error}\n`);
  event('error', 'stage_died', { stages: stage,
    action: 'exiting with status 1 to be restarted; frames held in memory are committed first' });
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** The spool, retried while it cannot be opened for lack of disk space: the gateway waits for room instead of
 * exiting in a restart loop. */
async function openSpool(config, isStopping) {
  const log = new RateLimitedLog({ intervalS: LONG_INTERVAL_S });
  for (;;) {
    try {
      return new Spool(config.spool.path, {
        fsync: config.spool.fsync, maxBytes: Math.trunc(config.spool.max_mb * 1024 * 1024),
        holdMs: config.spool.fsync_interval_ms,
      });
    } catch (error) {
      if (!/SQLITE_FULL|SQLITE_IOERR|ENOSPC/.test(`${error.code} ${error.message}`)) throw error;
      log.event('error', 'spool_unavailable', { spool: config.spool.path,
        error: String(error.message).slice(0, ERROR_CHARS),
        action: 'free disk space; retrying' });
      if (isStopping()) return null;
      await sleep(SPOOL_OPEN_RETRY_MS);
    }
  }
}

/** The spool's last run did not close it (its WAL file was left): one line saying what that may have cost;
 * sources: how many sources have a stored seq (their gaps across the restart are counted). */
export function reportUncleanStop(spool, fsync, sources) {
  event('warning', 'unclean_stop_detected', { spool: spool.path, fsync, sources,
    action: UNCLEAN_STOP_ACTIONS[fsync] });
}

/** Runs until SIGTERM, SIGINT or SIGHUP (or, with exitWhenDrained, until every input ended and its lines are in
 * Cassandra); resolves to the exit status. */
export async function runGateway(config, streams = [], { exitWhenDrained = false } = {}) {
  let stopRequested = false;
  let wakeMain = () => {};
  const requestStop = () => { stopRequested = true; wakeMain(); };
  process.on('SIGTERM', requestStop);
  process.on('SIGINT', requestStop);
  process.on('SIGHUP', requestStop); // a closed terminal: the same orderly stop

  const failAfterFrames = failpointFrames();
  const metrics = createMetrics();
  const spool = await openSpool(config, () => stopRequested);
  if (spool === null) return 0;
  let status = 0;
  const stageDied = (stage, error) => {
    reportStageDied(stage, error);
    status = 1;
    requestStop();
  };
  let sender = null;
  let alerting = null;
  const ingest = new Ingest(config, spool, metrics, () => sender?.nudge(), { failAfterFrames,
    onDied: (error) => stageDied('ingest', error),
    onAccepted: config.alerts.length ? (rows) => alerting.frames(rows) : null });
  alerting = new Alerting(config.alerts, metrics, { maxSources: config.decode.max_sources,
    known: ingest.knownSources });
  sender = new Sender({
    spool, clientFactory: () => buildClient(config.cassandra, { keyspace: config.cassandra.keyspace }),
    keyspace: config.cassandra.keyspace,
    batchRows: config.cassandra.batch_rows, maxInFlight: config.cassandra.max_in_flight,
    retryMaxS: config.cassandra.retry_max_s, metrics, onAcked: (range) => ingest.acknowledge(range),
    onLink: (connected, writeOk) => ingest.link(connected, writeOk),
  });

  let streamsOpen = streams.length;
  const inputs = [];
  for (const port of config.serial.ports) {
    const handler = new LineHandler(port.path, ingest, metrics, new Credits(SERIAL_CREDITS), lineDecoder(port),
      port.trusted);
    inputs.push(new SerialInput(port.path, port.baud, handler, (attempts) => backoffS(attempts,
      config.serial.reopen_max_s), (up) => metrics.input_up.set({ input: port.path }, up)));
  }
  for (const path of streams) {
    const handler = new LineHandler(path, ingest, metrics, new Credits(STREAM_CREDITS));
    inputs.push(new StreamInput(path, handler, () => { streamsOpen -= 1; wakeMain(); }));
  }

  const checkpointLog = new RateLimitedLog();
  const checkpoints = setInterval(() => {
    if (!spool.checkpointDue()) return;
    try {
      spool.checkpoint();
    } catch (error) { // e.g. a full disk: the WAL keeps the frames; the next call retries
      checkpointLog.event('warning', 'spool_checkpoint_failed', { error: String(error.message).slice(0, ERROR_CHARS),
        action: 'retrying; the frames stay in the WAL meanwhile' });
    }
  }, config.spool.fsync === 'interval' ? config.spool.fsync_interval_ms : CHECKPOINT_MS);

  const tally = ingest.statusTally;
  metrics.build_info.set({ version: VERSION, implementation: IMPLEMENTATION, policy: config.spool.fsync }, 1);
  metrics.last_seen.read = () => tally.lastSeenMs();
  const statusPage = new StatusPage({ version: VERSION, implementation: IMPLEMENTATION, policy: config.spool.fsync,
    startedMs: Date.now(), staleAfterS: config.metrics.stale_after_s },
  { tally, spool, lastError: () => sender.lastError, metrics, alertStates: () => alerting.alertStates(),
    metricsConfig: config.metrics, downSince: () => sender.downSinceMs });
  let server = null;
  if (config.metrics.listen) {
    server = await startStatusServer(config.metrics.listen, metrics.registry, statusPage,
      config.metrics.host_names);
  }
  const notifier = new SystemdNotifier();
  sender.start();
  const senderDone = sender.done.catch((error) => {
    ingest.link(false, false); // nothing writes to Cassandra any more: held frames are the only copy
    stageDied('sender', error);
  });
  for (const input of inputs) input.start();
  event('info', 'gateway_started', { inputs: inputs.length, spool: config.spool.path, spooled_frames: spool.depth,
    fsync: config.spool.fsync, metrics: config.metrics.listen || 'off' });
  if (spool.uncleanStop) reportUncleanStop(spool, config.spool.fsync, ingest.storedSeqs);
  reportDamage(spool.recovered, metrics);
  notifier.notify('READY=1');

  let lastWatchdog = 0;
  let lastSize = 0;
  const drained = () => ingest.idle && spool.depth === 0 && sender.idle;
  // A file input's end is noticed within 0.2 s (replays and benchmarks time it); serial ports run for months.
  const mainLoopMs = exitWhenDrained ? 200 : 1000;
  while (!stopRequested) {
    await new Promise((resolve) => {
      wakeMain = resolve;
      setTimeout(resolve, mainLoopMs);
    });
    const now = performance.now();
    metrics.spool_frames.set(spool.depth);
    if (alerting.active) alerting.tick();
    if (now - lastSize >= 1000) {
      metrics.spool_bytes.set(spool.usedBytes());
      lastSize = now;
    }
    // A timer that runs at all means the loop is not blocked; the sender's heartbeat says it is not stuck.
    const healthy = now - sender.heartbeat < STALL_MS;
    if (notifier.watchdogIntervalS && healthy && now - lastWatchdog >= notifier.watchdogIntervalS * 1000) {
      notifier.notify(`WATCHDOG=1\nSTATUS=spooled ${spool.depth} frames`);
      lastWatchdog = now;
    }
    if (exitWhenDrained && inputs.length && streamsOpen === 0 && drained()) {
      event('info', 'inputs_done_and_spool_drained', {});
      break;
    }
  }

  const stopping = notifier.notify('STOPPING=1'); // sent by a child: awaited before the process exits
  event('info', 'gateway_stopping', { spooled_frames: spool.depth });
  spool.stopping(); // frames already read may take the last of a full disk's reserve
  await Promise.race([Promise.all(inputs.map((input) => input.stop())), sleep(INPUTS_STOP_MS)]);
  const deadline = performance.now() + INPUTS_DRAIN_MS;
  while (ingest.queue.length && ingest.died === null && performance.now() < deadline) await sleep(20);
  sender.stop();
  await senderDone;
  await ingest.stop();
  alerting.stop();
  clearInterval(checkpoints);
  metrics.spool_frames.set(spool.depth);
  await spool.whenDurable();
  // Read and never committed: frames a stop could not commit, and a dead ingest's frames not handed over.
  const lost = ingest.lostFrames + ingest.unspooledFrames() + spool.close();
  if (server !== null) await server.close();
  event(lost ? 'warning' : 'info', 'gateway_stopped', { spooled_frames: spool.fileFrames, lost_frames: lost });
  await stopping;
  process.off('SIGTERM', requestStop);
  process.off('SIGINT', requestStop);
  process.off('SIGHUP', requestStop);
  return status;
}
