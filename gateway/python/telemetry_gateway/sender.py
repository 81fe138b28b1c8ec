"""The sender: spooled frames → Cassandra, acknowledged back to the spool only once written.

Frames are taken from the spool in id order in chunks, planned into single-partition UNLOGGED batches plus the
`latest` and `source_days` writes they imply, and sent asynchronously with a bound on requests in flight (a
failed request keeps its slot while it waits for its retry, so an unreachable cluster stops the taking, not the
reading). When all of a chunk's requests succeeded, its readings count as written; its `day_changes` rows are
written after that (only then: an analytics job that sees the change must find the readings), coalesced with
other chunks' every FLUSH_S, and then the chunks are acknowledged to the spool.

`latest` is a view of the newest value per (source, metric), not a record: its rows are coalesced in memory and
written every FLUSH_S (and at shutdown), with the reading's time as write timestamp, so it never moves back.
Every request is retried with backoff until it succeeds: nothing is dropped, and the writes are idempotent, so a
retry or a replay after a crash never duplicates a row.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from operator import attrgetter
from typing import Callable

from cassandra import Unavailable, WriteTimeout, OperationTimedOut
from cassandra.cluster import Cluster, NoHostAvailable, Session
from cassandra.query import BatchStatement, BatchType, Statement

from .backoff import backoff_s
from .cassandra_session import Statements, prepare
from .logs import RateLimitedLog, event
from .metrics import Metrics
from .reading_batches import ReadingBatchEncoder
from .spool import Spool, SpooledFrame
from .write_plan import LatestRow, plan_writes


# `latest` and `day_changes` are written at most this often: at low rates a chunk holds a frame or two, and a
# write of each per chunk would double the requests.
FLUSH_S = 0.5
KNOWN_DAYS_MAX = 10_000  # (source, day) pairs whose source_days row is known written; cleared past it
_RECEIVED_MS = attrgetter("received_ms")


@dataclass
class Chunk:
    """Frames taken together: consecutive in the spool, so acknowledged as one id range."""
    first_id: int
    last_id: int
    frames: list[SpooledFrame]  # let go once the readings are written
    rows: int
    days: list[tuple[str, date]]
    remaining: int = 0  # its readings and source_days requests not yet succeeded


@dataclass
class DayChanges:
    """The day_changes write of the chunks whose readings were written since the previous one."""
    chunks: list[Chunk]


@dataclass(order=True)
class Request:
    due: float
    statement: Statement = field(compare=False)
    owner: Chunk | DayChanges | None = field(compare=False)  # None: a `latest` write, acknowledged by nobody
    attempts: int = field(default=0, compare=False)
    sent_at: float = field(default=0.0, compare=False)


class Sender:
    def __init__(self, spool: Spool, cluster_factory: Callable[[], Cluster], keyspace: str, batch_rows: int,
                 max_in_flight: int, retry_max_s: float, metrics: Metrics,
                 on_acked: Callable[[tuple[int, int]], None]) -> None:
        self._spool = spool
        self._cluster_factory = cluster_factory
        self._keyspace = keyspace
        self._batch_rows = batch_rows
        self._max_in_flight = max_in_flight
        self._retry_max = retry_max_s
        self._metrics = metrics
        self._on_acked = on_acked
        self._log = RateLimitedLog()
        self._cluster: Cluster | None = None
        self._session: Session | None = None
        self._statements: Statements | None = None
        self._known_days: set[tuple[str, date]] = set()
        self._latest: dict[tuple[str, str], LatestRow] = {}
        self._latest_flushed = self._changes_flushed = time.monotonic()
        self._written: list[Chunk] = []  # readings written, day_changes not yet
        self._connect_attempts = 0
        self._cursor = 0  # highest spool id taken; everything above it is new
        # Whether the spool may hold frames above the cursor: set by the ingest's nudge and by a full take, so
        # the many wake-ups for answers do not each query the spool.
        self._more = True
        self._outstanding = 0  # requests of taken chunks not yet succeeded (ready, in flight or awaiting retry)
        self._in_flight = 0  # requests sent and not yet answered
        self._ready: deque[Request] = deque()
        self._chunk_frames = max(100, max_in_flight * batch_rows // 2)
        self._done: deque[tuple[Request, BaseException | None]] = deque()
        self._retries: list[Request] = []
        self._wake = threading.Event()
        self._stop = threading.Event()
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
        return self._outstanding == 0 and not self._written

    # --- the sender thread ---------------------------------------------------------------------------------
    def run(self, drain_timeout_s: float = 15.0) -> None:
        try:
            while not self._stop.is_set():
                self.heartbeat = time.monotonic()
                if self._session is None and not self._connect():
                    self._stop.wait(self._backoff_s(self._connect_attempts))
                    continue
                self._step()
            deadline = time.monotonic() + drain_timeout_s
            if self._session is not None:
                self._flush_latest()
            while not self.idle and time.monotonic() < deadline and self._session is not None:
                self._step(take_new=False)
            if not self.idle:
                event(logging.WARNING, "shutdown_with_unacknowledged_writes", requests=self._outstanding,
                      note="their frames stay in the spool and are sent at the next start")
        finally:
            if self._cluster is not None:
                self._cluster.shutdown()

    def _connect(self) -> bool:
        self._connect_attempts += 1
        cluster = self._cluster_factory()
        try:
            session = cluster.connect(self._keyspace)
            self._statements = prepare(session)
            self._reading_batches = ReadingBatchEncoder(session, self._statements.reading)
        except Exception as error:  # unreachable, auth, schema missing: retried; the spool keeps the frames
            cluster.shutdown()
            self._metrics.cassandra_up.set(0)
            self._log.event(logging.WARNING, "cassandra_unreachable", error=type(error).__name__,
                            detail=str(error)[:200], action="retrying; frames are kept in the spool")
            return False
        self._cluster, self._session = cluster, session
        self._connect_attempts = 0
        self._metrics.cassandra_up.set(1)
        event(logging.INFO, "cassandra_connected", keyspace=self._keyspace,
              hosts=",".join(str(h.endpoint) for h in cluster.metadata.all_hosts()))
        return True

    def _backoff_s(self, attempts: int) -> float:
        return backoff_s(attempts, self._retry_max)

    def _step(self, take_new: bool = True) -> None:
        self._wake.wait(0.05)
        self._wake.clear()
        self._settle_done()
        now = time.monotonic()
        while self._retries and self._retries[0].due <= now:
            self._ready.appendleft(heapq.heappop(self._retries))
        if self._written and (not take_new or now - self._changes_flushed >= FLUSH_S):
            self._flush_day_changes()
        if take_new:
            self._take()
            if self._latest and now - self._latest_flushed >= FLUSH_S:
                self._flush_latest()
        else:
            self._pump()

    def _take(self) -> None:
        # Keep one chunk's worth of requests ready; the spool holds the rest (memory stays bounded).
        while self._more and len(self._ready) + len(self._retries) < self._max_in_flight:
            self._more = False  # before the query: a nudge from here on sets it again
            frames = self._spool.take(self._cursor, limit=self._chunk_frames)
            if not frames:
                break
            if len(frames) == self._chunk_frames:
                self._more = True
            self._cursor = frames[-1].id
            plan = plan_writes(frames, self._batch_rows)
            chunk = Chunk(frames[0].id, frames[-1].id, frames, sum(b.rows for b in plan.batches), plan.days)
            requests = [self._reading_batches.batch(b.source, b.day, b.frames) for b in plan.batches]
            self._merge_latest(plan.latest)
            requests += [self._statements.source_day.bind((day, source))
                         for source, day in plan.days if (source, day) not in self._known_days]
            chunk.remaining = len(requests)
            self._outstanding += len(requests)
            self._ready.extend(Request(0.0, statement, chunk) for statement in requests)
        self._pump()

    def _pump(self) -> None:
        while self._ready and self._in_flight < self._max_in_flight:
            self._send(self._ready.popleft())

    def _merge_latest(self, rows: list[LatestRow]) -> None:
        for row in rows:
            current = self._latest.get((row.source, row.metric))
            if current is None or row.ts_ms >= current.ts_ms:
                self._latest[(row.source, row.metric)] = row

    def _flush_latest(self) -> None:
        rows, self._latest = list(self._latest.values()), {}
        self._latest_flushed = time.monotonic()
        batches = self._latest_batches(rows)
        self._outstanding += len(batches)
        self._ready.extend(Request(0.0, batch, None) for batch in batches)
        self._pump()

    def _latest_batches(self, latest: list[LatestRow]) -> list[Statement]:
        by_source: dict[str, BatchStatement] = {}
        for row in latest:
            batch = by_source.get(row.source)
            if batch is None:
                batch = by_source[row.source] = BatchStatement(batch_type=BatchType.UNLOGGED)
                batch.is_idempotent = True
            batch.add(self._statements.latest, (row.source, row.metric, row.ts_ms, row.value,
                                                row.ts_ms * 1000))
        return list(by_source.values())

    def _flush_day_changes(self) -> None:
        chunks, self._written = self._written, []
        self._changes_flushed = time.monotonic()
        days = list(dict.fromkeys(day for chunk in chunks for day in chunk.days))
        self._outstanding += 1
        self._ready.appendleft(Request(0.0, self._day_changes(days), DayChanges(chunks)))

    def _day_changes(self, days: list[tuple[str, date]]) -> Statement:
        now = datetime.now(timezone.utc)
        bucket = now.replace(minute=0, second=0, microsecond=0)
        batch = BatchStatement(batch_type=BatchType.UNLOGGED)  # one partition: the hour bucket
        for source, day in days:
            batch.add(self._statements.day_change, (bucket, day, source, now))
        batch.is_idempotent = True
        return batch

    def _send(self, request: Request) -> None:
        self._in_flight += 1
        request.sent_at = time.monotonic()
        try:
            future = self._session.execute_async(request.statement)
        except Exception as error:  # e.g. the session is shutting down: same path as a failed request
            self._done.append((request, error))
            return
        future.add_callbacks(self._on_success, self._on_failure, callback_args=(request,),
                             errback_args=(request,))

    # Driver callbacks run on its event-loop thread: hand the result over, nothing else.
    def _on_success(self, _rows, request: Request) -> None:
        self._done.append((request, None))
        self._wake.set()

    def _on_failure(self, error: BaseException, request: Request) -> None:
        self._done.append((request, error))
        self._wake.set()

    def _settle_done(self) -> None:
        now = time.monotonic()
        while self._done:
            request, error = self._done.popleft()
            self._in_flight -= 1
            if error is None:
                self._metrics.write_latency.observe(now - request.sent_at)
                self._metrics.cassandra_up.set(1)
                self._outstanding -= 1
                self._release(request.statement)
                owner = request.owner
                if isinstance(owner, Chunk):
                    owner.remaining -= 1
                    if owner.remaining == 0:
                        self._readings_written(owner)
                elif isinstance(owner, DayChanges):
                    for chunk in owner.chunks:
                        self._acknowledge(chunk)
            else:
                kind = type(error).__name__
                self._metrics.write_errors.labels(kind).inc()
                if isinstance(error, (NoHostAvailable, Unavailable, WriteTimeout, OperationTimedOut)):
                    self._metrics.cassandra_up.set(0 if isinstance(error, NoHostAvailable) else 1)
                request.attempts += 1
                request.due = now + self._backoff_s(request.attempts)
                heapq.heappush(self._retries, request)
                self._log.event(logging.WARNING, "write_failed", key=kind, error=kind, detail=str(error)[:200],
                                attempts=request.attempts, action="retrying with backoff")
        self._metrics.requests_in_flight.set(self._in_flight)

    @staticmethod
    def _release(statement: Statement) -> None:
        """A written batch's rows are freed now, not by the cyclic GC: the driver's finished future stays in a
        reference cycle (with its timeout timer) and holds the batch until a collection finds the cycle. When
        readings batches were lists of row tuples (~400 a request), that was 140k objects/s of cyclic garbage at
        70k rows/s; now their rows are one bytes object (EncodedRows), still ~15 KB a request."""
        if isinstance(statement, BatchStatement):
            statement.clear()  # the driver's way to empty a batch whose execution has completed

    def _acknowledge(self, chunk: Chunk) -> None:
        """The chunk's readings and its day_changes are written: its frames may leave the spool."""
        if len(self._known_days) > KNOWN_DAYS_MAX:
            self._known_days.clear()  # junk sources must not grow it; forgetting only repeats idempotent writes
        self._known_days.update(chunk.days)
        self._on_acked((chunk.first_id, chunk.last_id))

    def _readings_written(self, chunk: Chunk) -> None:
        self._metrics.rows_written.inc(chunk.rows)
        self._metrics.frames_written.inc(len(chunk.frames))
        now_ms = time.time() * 1000
        observe = self._metrics.delivery_latency.observe
        # the frames of a read share their receipt time: one observation per read, not per frame
        for received_ms, frames in Counter(map(_RECEIVED_MS, chunk.frames)).items():
            observe(max(0.0, (now_ms - received_ms) / 1000), frames)
        chunk.frames = []
        self._written.append(chunk)
