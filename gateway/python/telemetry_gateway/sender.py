"""The sender: spooled frames → Cassandra, acknowledged back to the spool only once written.

Frames are taken from the spool in id order in chunks, planned into single-partition UNLOGGED batches plus the
`latest` and `source_days` writes they imply, and sent asynchronously (RequestPump) with a bound on requests in
flight. Taking stops while a chunk's worth of requests is ready, waiting for a mark or waiting for a retry
(RetrySchedule), so an unreachable cluster stops the taking, not the reading, and memory stays bounded.

Day marks first (gateway/contract/day-marks.md): a readings request waits until its day has a fresh mark
(MarkGate, mark_gate.py). When all of a chunk's requests succeeded, its frames are acknowledged to the spool
(WriteLedger). `latest` rows are coalesced (LatestRows) and written every LATEST_FLUSH_S and at shutdown.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from datetime import date
from operator import attrgetter
from typing import Callable

from cassandra.cluster import Cluster, NoHostAvailable, Session
from cassandra.query import BatchStatement, BatchType, Statement

from .backoff import backoff_s
from .cassandra_session import Statements, prepare
from .contract_constants import contract_number, contract_seconds
from .day_marks import mark_instant
from .latest_rows import LatestRows, latest_batches
from .logs import LONG_INTERVAL_S, RateLimitedLog, event
from .mark_gate import MarkGate
from .metrics import Metrics
from .reading_batches import ReadingBatchEncoder
from .request_pump import Request, RequestPump
from .retry_schedule import RetrySchedule
from .spool import Spool
from .write_error_kinds import condition_name, condition_of, first_line, kind_of
from .write_ledger import Chunk, MarkWrite, WriteLedger
from .write_plan import plan_writes

# What an operator does about a failed connect, by error kind (the same words in every gateway).
CONNECT_ACTIONS = {
    "unauthorized": "check the Cassandra credentials (credentials_file, read again at each attempt, or "
                    "TELEMETRY_CASSANDRA_USERNAME/_PASSWORD); retrying; frames are kept in the spool",
    "other": "retrying; frames are kept in the spool",
}

# `latest` is a view, not a record: written coalesced, a write per source every few seconds. At low rates a chunk
# holds a frame or two, and a write of it per chunk would multiply the requests a small gateway sends.
DAMAGED_ROW_ACTION = ("a frame row in the spool failed its checksum (a damaged SD card?): it was not sent and was "
                      "deleted; check the card")
LATEST_FLUSH_S = contract_seconds("latest_flush_ms")
# The longest the loop sleeps with nothing to do: answers, new frames and a stop wake it at once, timers (flushes,
# retries) when due. A Pi's gateway is idle most of the time, and every wake-up of a thread costs CPU.
IDLE_S = 1.0
DRAIN_TIMEOUT_S = contract_seconds("sender_drain_ms")  # at a stop, the most the writes in flight are waited for
CHUNK_FRAMES_MIN = contract_number("chunk_frames_min")
BUSY_WAIT_S = 0.05  # while the spool may hold more than was taken
_RECEIVED_MS = attrgetter("received_ms")


class Sender:
    def __init__(self, spool: Spool, cluster_factory: Callable[[], Cluster], keyspace: str, batch_rows: int,
                 max_in_flight: int, retry_max_s: float, metrics: Metrics,
                 on_acked: Callable[[tuple[int, int]], None],
                 on_link: Callable[[bool, bool], None] = lambda connected, write_ok: None) -> None:
        self._spool = spool
        self._cluster_factory = cluster_factory
        self._keyspace = keyspace
        self._batch_rows = batch_rows
        self._retry_max = retry_max_s
        self._metrics = metrics
        self._on_acked = on_acked
        self._on_link = on_link  # (connected, last write succeeded): whether the spool may hold frames
        self._link_state = (False, True)  # as last told: not connected, no write failed yet
        self.last_error: tuple[str, int] | None = None  # (error kind, wall ms) of the last failure: status page
        # wall ms since which Cassandra is down (the start until the first connection), None while up: /healthz
        self.down_since_ms: int | None = time.time_ns() // 1_000_000
        self._log = RateLimitedLog()
        self._damage_log = RateLimitedLog(LONG_INTERVAL_S)  # spool_frame_damaged: logs.md, one line a minute
        self._cluster: Cluster | None = None
        self._session: Session | None = None
        self._statements: Statements | None = None
        self._connect_attempts = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._pump = RequestPump(max_in_flight, self._wake, self._before_send)
        self._retries = RetrySchedule(retry_max_s)
        self._ledger = WriteLedger()
        self._gate = MarkGate(self._pump, self._ledger, self._mark_batch)
        self._latest = LatestRows()
        self._latest_flushed = time.monotonic()
        self._cursor = 0  # highest spool id taken; everything above it is new
        # Whether the spool may hold frames above the cursor: set by the ingest's nudge and by a full take, so
        # the many wake-ups for answers do not each query the spool.
        self._more = True
        self._chunk_frames = max(CHUNK_FRAMES_MIN, max_in_flight * batch_rows // 2)
        self.heartbeat = time.monotonic()

    # --- called from other threads -------------------------------------------------------------------------
    def nudge(self) -> None:
        """New frames were spooled."""
        self._more = True
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    @property
    def idle(self) -> bool:
        return self._ledger.idle

    def _cassandra_up(self, up: int) -> None:
        self._metrics.cassandra_up.set(up)
        if up:
            self.down_since_ms = None
        elif self.down_since_ms is None:
            self.down_since_ms = time.time_ns() // 1_000_000

    def _link(self, connected: bool, write_ok: bool) -> None:
        """Tells on_link of a change of the link's state."""
        if (connected, write_ok) != self._link_state:
            self._link_state = (connected, write_ok)
            self._on_link(connected, write_ok)

    # --- the sender thread ---------------------------------------------------------------------------------
    def run(self, drain_timeout_s: float = DRAIN_TIMEOUT_S) -> None:
        try:
            while not self._stop.is_set():
                self.heartbeat = time.monotonic()
                if self._session is None and not self._connect():
                    self._stop.wait(backoff_s(self._connect_attempts, self._retry_max))
                    continue
                self._step()
            deadline = time.monotonic() + drain_timeout_s
            if self._session is not None:
                self._flush_latest()
            while not self.idle and time.monotonic() < deadline and self._session is not None:
                self._step(take_new=False)
            if not self.idle:
                event(logging.WARNING, "shutdown_with_unacknowledged_writes", requests=self._ledger.outstanding,
                      note="their frames stay in the spool and are sent at the next start")
        finally:
            if self._cluster is not None:
                self._cluster.shutdown()

    def _connect(self) -> bool:
        self._connect_attempts += 1
        cluster = None
        try:
            cluster = self._cluster_factory()  # raises for a host name that does not resolve (yet: DNS at boot)
            session = cluster.connect(self._keyspace)
            self._statements = prepare(session)
            self._reading_batches = ReadingBatchEncoder(session, self._statements.reading)
        except Exception as error:  # unresolvable, unreachable, auth, schema missing: retried; frames stay spooled
            if cluster is not None:
                cluster.shutdown()
            self._cassandra_up(0)
            self._link(False, self._link_state[1])
            condition = condition_of(error)
            kind = kind_of(condition)
            self.last_error = (kind, time.time_ns() // 1_000_000)
            self._log.event(logging.WARNING, "cassandra_unreachable", condition=condition_name(condition), kind=kind,
                            detail=first_line(error), action=CONNECT_ACTIONS.get(kind, CONNECT_ACTIONS["other"]))
            return False
        self._cluster, self._session = cluster, session
        self._connect_attempts = 0
        self._cassandra_up(1)
        self._link(True, True)  # a new session: no write of it has failed
        event(logging.INFO, "cassandra_connected", keyspace=self._keyspace,
              hosts=",".join(str(h.endpoint) for h in cluster.metadata.all_hosts()))
        return True

    def _step(self, take_new: bool = True) -> None:
        self._wake.wait(self._wait_s(time.monotonic()))
        self._wake.clear()
        self._settle()
        now = time.monotonic()
        self._pump.add(self._retries.due(now), first=True)
        if take_new:
            self._take()
            if self._latest and now - self._latest_flushed >= LATEST_FLUSH_S:
                self._flush_latest()
        self._pump.send(self._session)

    def _wait_s(self, now: float) -> float:
        """How long the loop may sleep before a timer is due."""
        wait = BUSY_WAIT_S if self._more else IDLE_S
        if self._latest:
            wait = min(wait, self._latest_flushed + LATEST_FLUSH_S - now)
        return max(0.0, min(wait, self._retries.next_due_s(now)))

    def _take(self) -> None:
        # Keep one chunk's worth of requests ready; the spool holds the rest (memory stays bounded).
        while self._more and self._pump.waiting + self._gate.parked + len(self._retries) < self._pump.max_in_flight:
            self._more = False  # before the query: a nudge from here on sets it again
            frames = self._spool.take(self._cursor, limit=self._chunk_frames)
            damaged = self._spool.damaged_rows()
            self._report_damaged(damaged)
            if damaged or len(frames) == self._chunk_frames:
                self._more = True  # rows left out (deleted) may leave a full chunk's worth behind them
            if not frames:
                continue
            self._cursor = frames[-1].id
            plan = plan_writes(frames, self._batch_rows)
            chunk = Chunk(frames[0].id, frames[-1].id, frames, sum(b.rows for b in plan.batches), plan.days)
            requests = [Request(0.0, self._reading_batches.batch(b.source, b.day, b.frames), chunk,
                                day=(b.source, b.day)) for b in plan.batches]
            self._latest.merge(plan.latest)
            requests += [Request(0.0, self._statements.source_day.bind((day, source)), chunk)
                         for source, day in plan.days if (source, day) not in self._ledger.known_days]
            self._ledger.expect(len(requests), chunk)
            self._pump.add(self._gate.hold(requests, plan.days, time.monotonic()))

    def _report_damaged(self, rows: list[tuple]) -> None:
        """Frame rows that failed their checksum: not sent, deleted (spool.md, "Row checksums")."""
        for row in rows:
            self._metrics.spool_invalid_frames.inc()
            source = row[1].decode("utf-8", "replace") if isinstance(row[1], bytes) else row[1]
            self._damage_log.event(logging.ERROR, "spool_frame_damaged", id=row[0], source=source, ts_ms=row[2],
                                   action=DAMAGED_ROW_ACTION)

    def _flush_latest(self) -> None:
        self._latest_flushed = time.monotonic()
        batches = latest_batches(self._latest.take(), self._statements.latest)
        self._ledger.expect(len(batches))
        self._pump.add(Request(0.0, batch, None) for batch in batches)
        self._pump.send(self._session)

    # --- day marks (gateway/contract/day-marks.md; mark_gate.py) ----------------------------------------------
    def _before_send(self, request: Request) -> bool:
        return self._gate.before_send(request, time.monotonic(), time.time_ns() // 1_000_000)

    def _mark_batch(self, days: list[tuple[str, date]], wall_ms: int) -> Statement:
        """The day_changes rows of days, stamped wall_ms: bucket and written_at of this attempt."""
        bucket, written_at = mark_instant(wall_ms)
        batch = BatchStatement(batch_type=BatchType.UNLOGGED)  # one partition: the hour bucket
        for source, day in days:
            batch.add(self._statements.day_change, (bucket, day, source, written_at))
        batch.is_idempotent = True
        return batch

    def _settle(self) -> None:
        now = time.monotonic()
        for request, error in self._pump.answers():
            if error is None:
                self._metrics.write_latency.observe(now - request.sent_at)
                self._cassandra_up(1)
                self._link(True, True)
                self._release(request.statement)
                written = self._ledger.succeeded(request.owner)
                if written is not None:
                    self._count_written(written)
                    self._on_acked((written.first_id, written.last_id))
                elif type(request.owner) is MarkWrite:
                    self._gate.marked(request.owner, time.monotonic())
            else:
                condition = condition_of(error)
                kind = kind_of(condition)
                self._link(self._link_state[0], False)
                self._metrics.write_errors.labels(kind).inc()
                self.last_error = (kind, time.time_ns() // 1_000_000)
                if kind in ("unavailable", "timeout", "overloaded"):
                    self._cassandra_up(0 if isinstance(error, NoHostAvailable) else 1)
                self._retries.retry_later(request, now)
                self._log.event(logging.WARNING, "write_failed", key=kind, error=kind,
                                condition=condition_name(condition), detail=first_line(error),
                                attempts=request.attempts,
                                action="retrying with backoff")
        self._metrics.requests_in_flight.set(self._pump.in_flight)

    @staticmethod
    def _release(statement: Statement) -> None:
        """A written batch's rows are freed now, not by the cyclic GC: the driver's finished future stays in a
        reference cycle (with its timeout timer) and holds the batch until a collection finds the cycle; a
        readings batch holds ~15 KB of encoded rows."""
        if isinstance(statement, BatchStatement):
            statement.clear()  # the driver's way to empty a batch whose execution has completed

    def _count_written(self, chunk: Chunk) -> None:
        self._metrics.rows_written.inc(chunk.rows)
        self._metrics.frames_written.inc(len(chunk.frames))
        now_ms = time.time() * 1000
        observe = self._metrics.delivery_latency.observe
        # the frames of a read share their receipt time: one observation per read, not per frame
        for received_ms, frames in Counter(map(_RECEIVED_MS, chunk.frames)).items():
            observe(max(0.0, (now_ms - received_ms) / 1000), frames)
        chunk.frames = []
