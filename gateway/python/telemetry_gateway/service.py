"""The running gateway: inputs → ingest (spool) → sender (Cassandra), as threads, with an orderly stop.

Stop order on SIGTERM, SIGINT or SIGHUP (gateway/contract/process.md): inputs stop reading; ingest spools what they handed over; the sender finishes the writes in
flight (bounded wait) and their acknowledgements are committed; the spool is closed. Frames not yet written stay
in the spool and go out at the next start.
"""

from __future__ import annotations

import functools
import gc
import logging
import signal
import sqlite3
import threading
import time

from .cassandra_session import build_cluster
from .alerting import Alerting
from .config import Config
from .contract_constants import contract_seconds
from .ingest import Ingest
from .credits import SERIAL_CREDITS, STREAM_CREDITS
from .line_handler import LineHandler
from .serial_input import SerialInput
from .stream_input import StreamInput
from .backoff import backoff_s
from .logs import ERROR_CHARS, LONG_INTERVAL_S, RateLimitedLog, event
from .metrics import Metrics
from .room_csv import line_decoder
from .sender import Sender
from .spool import Spool
from .spool_damage import report_damage
from .status_document import GatewayFacts
from .status_page import StatusPage
from .status_server import start_status_server
from .systemd_notify import SystemdNotifier
from .version import IMPLEMENTATION, VERSION

# A stage whose loop has not turned for this long is stuck: stop feeding the watchdog.
STALL_S = contract_seconds("stage_stall_ms")
CHECKPOINT_S = contract_seconds("checkpoint_period_ms")  # with fsync = batch, checkpoints only keep the WAL small


SPOOL_OPEN_RETRY_S = contract_seconds("spool_open_retry_ms")
# At stop, how long stuck inputs are waited for, all together (process.md: the stop goes on).
INPUTS_STOP_S = contract_seconds("inputs_stop_ms")
INPUTS_DRAIN_S = contract_seconds("inputs_drain_ms")  # then how long the ingest gets to take what they handed over
# What the last run's crash (SIGKILL, power cut) may have cost, per fsync policy (gateway/contract/spool.md).
UNCLEAN_STOP_ACTIONS = {
    "deferred": "the last run did not stop cleanly: frames it read in its last fsync_interval_ms that Cassandra "
                "had not acknowledged may be missing; seq gaps from each source's last stored seq are counted in "
                "frames_possibly_lost",
    "batch": "the last run did not stop cleanly: only frames read in its last few ms may be missing; seq gaps are "
             "counted in frames_possibly_lost",
    "interval": "the last run did not stop cleanly: after a power cut, frames of its last fsync_interval_ms may be "
                "missing; seq gaps are counted in frames_possibly_lost",
}


def _locked(tally, read):
    with tally.lock:
        return read()


def open_spool(config: Config) -> Spool:
    """The spool, retried while it cannot be opened for lack of disk space (a spool without its reserve on a
    disk filled to the last block): the gateway waits for room instead of exiting in a restart loop."""
    log = RateLimitedLog(interval_s=LONG_INTERVAL_S)
    while True:
        try:
            return Spool(config.spool.path, config.spool.fsync, int(config.spool.max_mb * 1024 * 1024),
                         hold_ms=config.spool.fsync_interval_ms)
        except sqlite3.OperationalError as error:
            if "full" not in str(error) and "disk I/O" not in str(error):
                raise
            log.event(logging.ERROR, "spool_unavailable", spool=config.spool.path, error=str(error)[:ERROR_CHARS],
                      action="free disk space; retrying")
            time.sleep(SPOOL_OPEN_RETRY_S)


class Gateway:
    def __init__(self, config: Config, streams: list[str] = (), exit_when_drained: bool = False) -> None:
        self.config = config
        self.metrics = Metrics()
        self.spool = open_spool(config)
        self._stop = threading.Event()
        self._inputs_stop = threading.Event()
        self._checkpoints_stop = threading.Event()
        self._checkpoint_s = (config.spool.fsync_interval_ms / 1000 if config.spool.fsync == "interval"
                              else CHECKPOINT_S)
        self._checkpoint_log = RateLimitedLog()
        self.sender: Sender | None = None
        # Deferred on serial ports: an acknowledgement only lets a held frame go, which can wait for the next read
        # or due frame; a file replay (exit_when_drained) and a spool file's deletes are waited for.
        self.ingest = Ingest(config, self.spool, self.metrics, on_spooled=lambda: self.sender and self.sender.nudge(),
                             wake_on_ack=bool(streams) or config.spool.fsync != "deferred",
                             on_accepted=(lambda frames: self.alerting.frames(frames)) if config.alerts else None)
        self.alerting = Alerting(config.alerts, self.metrics, config.decode.max_sources, self.ingest.known_sources)
        self.sender = Sender(self.spool, lambda: build_cluster(config.cassandra), config.cassandra.keyspace,
                             config.cassandra.batch_rows, config.cassandra.max_in_flight,
                             config.cassandra.retry_max_s, self.metrics, on_acked=self.ingest.acknowledge,
                             on_link=self.ingest.link)
        tally = self.ingest.status_tally
        self.metrics.build_info.labels(VERSION, IMPLEMENTATION, config.spool.fsync).set(1)
        self.metrics.last_seen.read = lambda: _locked(tally, tally.last_seen_ms)
        facts = GatewayFacts(VERSION, IMPLEMENTATION, config.spool.fsync, time.time_ns() // 1_000_000,
                             config.metrics.stale_after_s)
        self.status_page = StatusPage(facts, tally, self.spool, lambda: self.sender.last_error, self.metrics,
                                      alert_states=self.alerting.states,  # status.md, "Alert states"
                                      metrics_config=config.metrics, down_since=lambda: self.sender.down_since_ms)
        self._streams_open = len(streams)
        self._exit_when_drained = exit_when_drained
        self._inputs: list[threading.Thread] = []
        reopen_backoff = functools.partial(backoff_s, max_s=config.serial.reopen_max_s)
        for port in config.serial.ports:
            handler = LineHandler(port.path, self.ingest, self.metrics, SERIAL_CREDITS, line_decoder(port),
                                  port.trusted)
            reader = SerialInput(port.path, port.baud, handler, self._inputs_stop, reopen_backoff,
                                 self.metrics.input_up.labels(port.path))
            self._inputs.append(threading.Thread(target=reader.run, name=f"serial {port.path}", daemon=True))
        for path in streams:
            handler = LineHandler(path, self.ingest, self.metrics, STREAM_CREDITS)
            reader = StreamInput(path, handler, self._inputs_stop, on_end=self._stream_ended)
            self._inputs.append(threading.Thread(target=reader.run, name=f"input {path}", daemon=True))

    def _checkpoints(self) -> None:
        while not self._checkpoints_stop.wait(self._checkpoint_s):
            if not self.spool.checkpoint_due(time.monotonic()):
                continue
            try:
                self.spool.checkpoint()
            except sqlite3.Error as error:  # e.g. a full disk: the WAL keeps the frames; the next call retries
                self._checkpoint_log.event(logging.WARNING, "spool_checkpoint_failed", error=str(error)[:ERROR_CHARS],
                                           action="retrying; the frames stay in the WAL meanwhile")

    def _stream_ended(self) -> None:
        self._streams_open -= 1

    def request_stop(self, *_signal_args) -> None:
        self._stop.set()

    def run(self) -> int:
        notifier = SystemdNotifier()
        server = None
        if self.config.metrics.listen:
            server = start_status_server(self.config.metrics.listen, self.metrics.registry, self.status_page,
                                         self.config.metrics.host_names)
        signal.signal(signal.SIGTERM, self.request_stop)
        signal.signal(signal.SIGINT, self.request_stop)
        signal.signal(signal.SIGHUP, self.request_stop)  # a closed terminal: the same orderly stop
        # Start-up objects (the driver's metadata, modules) live as long as the process: keep them out of every
        # later GC pass.
        gc.freeze()
        ingest = threading.Thread(target=self.ingest.run, name="ingest")
        sender = threading.Thread(target=self.sender.run, name="sender")
        checkpoints = threading.Thread(target=self._checkpoints, name="checkpoints")
        ingest.start()
        sender.start()
        checkpoints.start()
        for thread in self._inputs:
            thread.start()
        event(logging.INFO, "gateway_started", inputs=len(self._inputs), spool=self.spool.path,
              spooled_frames=self.spool.depth, fsync=self.config.spool.fsync,
              metrics=self.config.metrics.listen or "off")
        if self.spool.unclean_stop:
            event(logging.WARNING, "unclean_stop_detected", spool=self.spool.path, fsync=self.config.spool.fsync,
                  sources=len(self.spool.last_source_seqs(self.config.decode.max_sources)),
                  action=UNCLEAN_STOP_ACTIONS[self.config.spool.fsync])
        report_damage(self.spool.recovered, self.metrics)
        notifier.notify("READY=1")
        last_watchdog = last_size = 0.0
        status = 0
        # A file input's end is noticed within 0.2 s (replays and benchmarks time it); serial ports run for months.
        while not self._stop.wait(0.2 if self._exit_when_drained else 1.0):
            now = time.monotonic()
            dead = [thread.name for thread in (ingest, sender, checkpoints) if not thread.is_alive()]
            if dead:  # a bug, with its traceback above: a restart beats a gateway that reads and never writes
                event(logging.ERROR, "stage_died", stages=",".join(dead),
                      action="exiting with status 1 to be restarted; frames held in memory are committed first")
                status = 1
                break
            self.metrics.spool_frames.set(self.spool.depth)
            if self.alerting.active:
                self.alerting.tick()
            if now - last_size >= 1.0:
                self.metrics.spool_bytes.set(self.spool.used_bytes())
                last_size = now
            healthy = now - self.ingest.heartbeat < STALL_S and now - self.sender.heartbeat < STALL_S
            if notifier.watchdog_interval_s and healthy and now - last_watchdog >= notifier.watchdog_interval_s:
                notifier.notify(f"WATCHDOG=1\nSTATUS=spooled {self.spool.depth} frames")
                last_watchdog = now
            if self._exit_when_drained and self._inputs and self._streams_open == 0 and self.drained():
                event(logging.INFO, "inputs_done_and_spool_drained")
                break

        notifier.notify("STOPPING=1")
        event(logging.INFO, "gateway_stopping", spooled_frames=self.spool.depth)
        self.spool.stopping()  # frames already read may take the last of a full disk's reserve
        self._inputs_stop.set()
        inputs_deadline = time.monotonic() + INPUTS_STOP_S
        for thread in self._inputs:
            thread.join(timeout=max(0.0, inputs_deadline - time.monotonic()))
        deadline = time.monotonic() + INPUTS_DRAIN_S
        while not self.ingest.queue.empty() and time.monotonic() < deadline:
            time.sleep(0.02)
        self.sender.stop()
        sender.join()
        self.ingest.stop()
        ingest.join()
        self.alerting.stop()
        self._checkpoints_stop.set()
        checkpoints.join()
        self.metrics.spool_frames.set(self.spool.depth)
        # After a failed ingest its frames not yet handed over are lost; the spool commits what it holds.
        lost = self.ingest.lost_frames + (0 if self.ingest.finished else self.ingest.unspooled_frames())
        lost += self.spool.close()
        if server is not None:
            server.shutdown()
            server.server_close()
        event(logging.WARNING if lost else logging.INFO, "gateway_stopped", spooled_frames=self.spool.file_frames,
              lost_frames=lost)
        return status

    def drained(self) -> bool:
        return self.ingest.idle and self.spool.depth == 0 and self.sender.idle
