"""The ingest stage: decoded frames → duplicate check, timestamp → spool, committed in groups.

One thread owns this stage, so the per-source state (seen seqs, last timestamps) needs no lock. Readers hand each
read's frames over with the credit the read was made under (credits.py); the credit goes back once those frames are
committed, so what a crash can lose is bounded to a few reads. While the spool has no room (its cap with
when_full = pause, or a full disk) the credits of committed reads are held back: the readers stop reading and the
bytes wait in the kernel, not in memory (reading_pause.py). Frames already read are always committed: past the cap
into the spool's headroom, on a full disk into the room the spool's reserve file gives up (spool/room.py). Each
frame is judged and stamped by frame_acceptor.py.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time

from .config import Config
from .contract_constants import contract_seconds
from .counter_keys_log import log_counter_keys
from .frame_acceptor import FrameAcceptor
from .signing import Verifier
from .signing_config import signing_policy
from .logs import event
from .metrics import Metrics
from .reading_pause import ReadingPause
from .received import Received
from .spool import NewFrame, Spool, SpoolFull
from .spool.safe_seqs import Seqs

GROUP_MAX = 5000  # frames per commit at most: bounds one transaction's time and memory
# After the first frame of a group, wait this long for more. Frames also gather while a commit's fsync runs, so a
# short wait is enough to group them; a longer one only adds to every frame's latency from line to written rows.
GROUP_LINGER_S = 0.001
# The longest an idle loop sleeps: reads, acknowledgements and a stop wake it at once (WAKE), held frames when due.
# A Pi's gateway is idle most of the time, and every wake-up of a thread costs CPU.
IDLE_S = 1.0
WAKE = None  # put into the queue to wake the loop: an acknowledgement to commit, or a stop
RETRY_S = 0.5  # after a commit found no room at all
# Deferred, resuming holding (Spool.resuming): how long new frames may wait for the acknowledgements of the frames
# in flight, so that the commit deleting them empties the file and the new frames are held. They wait as a batch
# group does for its commit (read, not yet spooled, their reads' credits not given back: what a crash can lose
# stays bounded by the credits). Past it they are committed, and resuming is tried again RESUME_RETRY_S later.
RESUME_WAIT_S = contract_seconds("ack_wait_max_ms")
RESUME_RETRY_S = 1.0
# At shutdown, how long a commit that finds no room is retried before its frames are given up.
STOP_GRACE_S = contract_seconds("stop_grace_ms")
FAILPOINT = "TELEMETRY_GATEWAY_FAILPOINT"  # the conformance harness's test hook (spool.md, "Every stop ...")


class FailpointReached(RuntimeError):
    """Raised by the ingest_after_frames failpoint: the stage fails as a bug would."""


def failpoint_after_frames() -> int | None:
    """N of TELEMETRY_GATEWAY_FAILPOINT=ingest_after_frames:N, or None."""
    name, _, count = os.environ.get(FAILPOINT, "").partition(":")
    return int(count) if name == "ingest_after_frames" else None


class Ingest:
    def __init__(self, config: Config, spool: Spool, metrics: Metrics, on_spooled, wake_on_ack: bool = True,
                 on_accepted=None) -> None:
        self.queue: queue.Queue[Received] = queue.Queue()  # bounded by the readers' credits
        self._spool = spool
        self._metrics = metrics
        self._on_spooled = on_spooled
        self._on_accepted = on_accepted  # each group of accepted frames, in order (the alert rules)
        # Each source's last safe seq from the earlier run: gaps across the restart are counted (spool.md).
        self._acceptor = FrameAcceptor(config, metrics, spool.last_receipt_stamps(config.decode.max_sources),
                                       spool.last_source_seqs(config.decode.max_sources), spool.unclean_stop)
        # The keys are read here, at start only (signing.md); the counters continue from the spool's.
        self._acceptor.verifier = self._verifier = Verifier(signing_policy(config), spool.last_counters(),
                                                            spool.last_counter_keys())
        log_counter_keys(self._verifier, str(spool.path))
        self._room = ReadingPause(spool, metrics, config.spool.when_full == "drop_oldest")
        self._room.has_room()  # a spool opened without room pauses reading from the start, and says so
        # Deferred commits only what is due, not each group: waiting for more reads would buy nothing.
        self._linger_s = 0.0 if config.spool.fsync == "deferred" else GROUP_LINGER_S
        self._wake_on_ack = wake_on_ack  # else acknowledgements wait for the next read or due frame
        self._group_limit = GROUP_MAX  # halved while commits find no room, so a group fits what room is left
        self._acked: list[tuple[int, int]] = []  # id ranges
        self._acked_lock = threading.Lock()
        self._ack_arrived = threading.Event()  # set by acknowledge(), cleared when _acked is taken
        self._resume_deadline: float | None = None  # while new frames wait for acknowledgements (_await_acks)
        self._resume_retry_at = 0.0
        self._stop = threading.Event()
        self._pending: list[NewFrame] = []  # accepted, not yet handed to the spool
        self._accepted_count = 0
        self._fail_after = failpoint_after_frames()
        self.lost_frames = 0  # accepted frames given up at a stop (no room): the stop's log line counts them
        self.finished = False  # run() returned: False after it failed
        self.heartbeat = time.monotonic()

    @property
    def known_sources(self) -> list[str]:
        """The sources the spool knew at start (receipt stamps, stored seqs): the alert rules' silence watches them."""
        return list(dict.fromkeys([*self._acceptor.recent, *self._acceptor.seq.sources()]))

    @property
    def status_tally(self):
        """The per-source tally of accepted frames (status_tally.py), under its lock while reads are accepted."""
        return self._acceptor.tally

    def unspooled_frames(self) -> int:
        """Frames read but not handed to the spool: accepted ones pending, and those still queued. After this
        stage failed they are lost; the stop's log line counts them."""
        return len(self._pending) + sum(len(read.frames) for read in list(self.queue.queue) if read is not WAKE)

    def link(self, connected: bool, write_ok: bool) -> None:
        """From the sender: its link to Cassandra changed (connected; its last write succeeded). Frames held in
        memory are committed at once when that makes holding unsafe (spool.md)."""
        if self._spool.set_link(connected, write_ok):
            self.queue.put(WAKE)
        self._metrics.spool_holding.set(self._spool.holding)

    def put(self, received: Received) -> None:
        """One read's frames, from an input (line_handler.LineHandler)."""
        self.queue.put(received)

    @property
    def idle(self) -> bool:
        """Nothing read waits: no read queued, no accepted frame waiting for its commit."""
        return self.queue.empty() and not self._pending

    def acknowledge(self, ids: tuple[int, int]) -> None:
        """Called by the sender: the frames with ids in this inclusive range are in Cassandra and may leave the
        spool."""
        with self._acked_lock:
            self._acked.append(ids)
            self._ack_arrived.set()
        if self._wake_on_ack:
            self.queue.put(WAKE)

    def stop(self) -> None:
        self._stop.set()
        self.queue.put(WAKE)

    def run(self) -> None:
        self._run()
        self.finished = True

    def _run(self) -> None:
        pending: list[NewFrame] = []
        seqs: Seqs = {}  # newest (seq, ts_ms) per source of pending: stored once all of pending is committed
        credits: list[threading.Semaphore] = []  # of the reads in pending: back once pending is committed
        stamps: dict[str, int] = {}
        stop_deadline = None
        while True:
            self.heartbeat = now = time.monotonic()
            stopping = self._stop.is_set()
            if stopping and stop_deadline is None:
                stop_deadline = now + STOP_GRACE_S
            if not pending:
                delay_ms = self._spool.flush_delay_ms(now)
                wait_s = min(IDLE_S, IDLE_S if delay_ms is None else delay_ms / 1000, self._room.next_check_s(now))
                pending, seqs, read_credits = self._collect(wait_s=0.0 if stopping else max(0.001, wait_s))
                credits += read_credits
                stamps = self._acceptor.stamper.take_changed()
            self._pending = pending
            with self._acked_lock:
                acked, self._acked = self._acked, []
                self._ack_arrived.clear()
            if pending and not stopping and self._await_acks(now, acked):
                continue
            if pending or acked or self._spool.flush_delay_ms(now) == 0:
                group = pending[:self._group_limit]
                whole = len(group) == len(pending)
                if self._commit(group, acked, stamps, stopping, seqs=seqs if whole else None):
                    pending, stamps = pending[len(group):], {}
                    if whole:
                        seqs = {}
                    self._pending = pending
                    self._group_limit = min(GROUP_MAX, self._group_limit * 2)
                    self._failpoint(len(group))
                else:
                    self._group_limit = max(1, len(group) // 2)
                    with self._acked_lock:
                        self._acked[:0] = acked
                    if stopping and now > stop_deadline:
                        self.lost_frames = len(pending)  # held ones: the spool's close tries them once more
                        event(logging.ERROR, "shutdown_with_unspooled_frames", frames=self.lost_frames,
                              held_frames=self._spool.held_frames, reason="no room in the spool or on its disk",
                              note="these frames are lost")
                        return
                    self._stop.wait(RETRY_S)
                    continue
            if credits and not pending:
                self._room.withhold(credits)
                credits = []
            self._room.release_if_room(now)
            if stopping and not pending and not acked and self.queue.empty():
                # Deferred: what is still held in memory goes into the file, receipt stamps at their real values.
                if self._commit([], [], stamps, stopping, final=True):
                    return
                if now > stop_deadline:
                    event(logging.ERROR, "shutdown_with_unspooled_frames", frames=0,
                          held_frames=self._spool.held_frames, reason="no room in the spool or on its disk",
                          note="the spool's close tries the held frames once more")
                    return
                self._stop.wait(RETRY_S)

    def _await_acks(self, now: float, acked: list[tuple[int, int]]) -> bool:
        """Deferred, resuming holding: True while the pending frames wait (up to RESUME_WAIT_S) for acknowledgements
        that empty the file, so they can be held; acked goes back for the next turn, and this returns once more
        arrived or the wait is over. False: commit now (nothing to resume, the acknowledgements are there, or too
        slow)."""
        if now < self._resume_retry_at or not self._spool.resuming:
            self._resume_deadline = None
            return False
        if self._resume_deadline is None:
            self._resume_deadline = now + RESUME_WAIT_S
        if now >= self._resume_deadline:
            self._resume_deadline = None
            self._resume_retry_at = now + RESUME_RETRY_S
            return False
        if self._spool.emptied_by(acked):
            self._resume_deadline = None
            return False
        with self._acked_lock:
            self._acked[:0] = acked
        self._ack_arrived.wait(self._resume_deadline - now)
        return True

    def _failpoint(self, frames: int) -> None:
        self._accepted_count += frames
        if self._fail_after is not None and self._accepted_count >= self._fail_after:
            raise FailpointReached(f"{FAILPOINT}: ingest_after_frames:{self._fail_after} reached")

    def _collect(self, wait_s: float) -> tuple[list[NewFrame], Seqs, list[threading.Semaphore]]:
        reads: list[Received] = []
        frames = 0
        try:
            reads.append(self.queue.get(timeout=wait_s) if wait_s else self.queue.get_nowait())
            frames = len(reads[0].frames) if reads[0] is not WAKE else 0
            until = time.monotonic() + (self._linger_s if wait_s else 0)
            while frames < GROUP_MAX:
                left = until - time.monotonic()
                reads.append(self.queue.get(timeout=left) if left > 0 else self.queue.get_nowait())
                frames += len(reads[-1].frames) if reads[-1] is not WAKE else 0
        except queue.Empty:
            pass
        reads = [read for read in reads if read is not WAKE]
        accepted, seqs = self._acceptor.accept_reads(reads)
        if accepted and self._on_accepted is not None:
            self._on_accepted(accepted)
        return accepted, seqs, [read.credit for read in reads]

    def _commit(self, frames: list[NewFrame], acked: list[tuple[int, int]], stamps: dict[str, int],
                stopping: bool, final: bool = False, seqs: Seqs | None = None) -> bool:
        try:
            committed = self._spool.commit(frames, acked, stamps, final=final, seqs=seqs,
                                           counters=self._verifier.take_changed())
        except SpoolFull as full:
            kind = "cap" if full.cap_reached else "disk"
            if stopping and full.cap_reached:
                self._spool.lift_cap()  # frames already read are kept, past the cap, rather than lost at exit
            self._room.pause(kind, waiting=len(frames), detail=str(full))
            return False
        self._metrics.spool_frames.set(self._spool.depth)
        self._metrics.spool_holding.set(self._spool.holding)
        if committed:
            self._metrics.spool_frames_committed.inc(committed)
        if frames:
            self._on_spooled()
        return True
