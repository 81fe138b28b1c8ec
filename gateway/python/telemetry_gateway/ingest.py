"""The ingest stage: decoded frames → duplicate check, timestamp → spool, committed in groups.

One thread owns this stage, so the per-source state (seen seqs, last timestamps) needs no lock. Readers hand
frames over through a bounded queue: when the spool cannot take more (cap reached with when_full = pause, or a
full disk) the queue fills and the readers stop reading, instead of memory growing.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter
from typing import NamedTuple

from .config import Config
from .frame import Frame
from .logs import RateLimitedLog, event
from .metrics import Metrics
from .seq_tracker import SeqTracker
from .spool import NewFrame, Spool, SpoolFull
from .timestamps import DAY_MS, Stamper

GROUP_MAX = 5000  # frames per commit at most: bounds one transaction's time and memory
# After the first frame of a group, wait this long for more. Frames also gather while a commit's fsync runs, so a
# short wait is enough to group them; at 1,000 frames/s 1 ms gave p50 5-10 ms and p99 36-95 ms from line to
# written rows, 5 ms gave p50 16-21 ms and p99 83-162 ms.
GROUP_LINGER_S = 0.001
# Reads (up to inputs.READ_CHUNK bytes of frames each, ~250) between readers and the spool; full = readers wait
# (back-pressure).
QUEUE_READS = 32


class Received(NamedTuple):
    frames: list[Frame]  # the frames of one read
    received_ms: int


class Ingest:
    def __init__(self, config: Config, spool: Spool, metrics: Metrics, on_spooled) -> None:
        self.queue: queue.Queue[Received] = queue.Queue(maxsize=QUEUE_READS)
        self._spool = spool
        self._metrics = metrics
        self._on_spooled = on_spooled
        self._seq = SeqTracker(int(config.decode.duplicate_window_s * 1000))
        self._stamper = Stamper(int(config.time.max_future_s * 1000), int(config.time.max_age_days * DAY_MS),
                                last_receipt=spool.last_receipt_stamps())
        self._drop_oldest = config.spool.when_full == "drop_oldest"
        self._group_limit = GROUP_MAX  # halved while the spool is full, so a group never needs more than the room left
        self._acked: list[tuple[int, int]] = []  # id ranges
        self._acked_lock = threading.Lock()
        self._stop = threading.Event()
        self._log = RateLimitedLog()
        self.heartbeat = time.monotonic()

    def acknowledge(self, ids: tuple[int, int]) -> None:
        """Called by the sender: the frames with ids in this inclusive range are in Cassandra and may leave the
        spool."""
        with self._acked_lock:
            self._acked.append(ids)

    def stop(self) -> None:
        self._stop.set()

    def run(self) -> None:
        pending: list[NewFrame] = []
        stamps: dict[str, int] = {}
        while True:
            self.heartbeat = time.monotonic()
            stopping = self._stop.is_set()
            if not pending:
                pending = self._collect(wait_s=0.0 if stopping else 0.02)
                stamps = self._stamper.take_changed()
            with self._acked_lock:
                acked, self._acked = self._acked, []
            if pending or acked:
                group = pending[:self._group_limit]
                if self._commit(group, acked, stamps):
                    pending, stamps = pending[len(group):], {}
                    self._group_limit = min(GROUP_MAX, self._group_limit * 2)
                else:
                    self._group_limit = max(1, len(group) // 2)
                    with self._acked_lock:
                        self._acked[:0] = acked
                    if stopping:
                        event(logging.ERROR, "shutdown_with_unspooled_frames", frames=len(pending),
                              reason="spool full", note="these frames are lost")
                        return
                    self._stop.wait(0.5)
            elif stopping:
                return

    def _collect(self, wait_s: float) -> list[NewFrame]:
        reads: list[Received] = []
        frames = 0
        try:
            reads.append(self.queue.get(timeout=wait_s) if wait_s else self.queue.get_nowait())
            frames = len(reads[0].frames)
            until = time.monotonic() + (GROUP_LINGER_S if wait_s else 0)
            while frames < GROUP_MAX:
                left = until - time.monotonic()
                reads.append(self.queue.get(timeout=left) if left > 0 else self.queue.get_nowait())
                frames += len(reads[-1].frames)
        except queue.Empty:
            pass
        accepted: list[NewFrame] = []
        formats: Counter[str] = Counter()
        for frames_of_read, received_ms in reads:
            for frame in frames_of_read:
                new = self._accept(frame, received_ms)
                if new is not None:
                    accepted.append(new)
                    formats[frame.format] += 1
        for kind, count in formats.items():  # the counter once per group, not once per frame
            self._metrics.frames_accepted.labels(kind).inc(count)
        return accepted

    def _accept(self, frame: Frame, received_ms: int) -> NewFrame | None:
        if frame.seq is not None:
            verdict = self._seq.observe(frame.source, frame.seq, received_ms)
            if verdict.duplicate:
                self._metrics.duplicates.labels(frame.source).inc()
                return None
            if verdict.missing:
                self._metrics.seq_missing.labels(frame.source).inc(verdict.missing)
                self._log.event(logging.INFO, "seq_gap", key=frame.source, source=frame.source,
                                missing=verdict.missing, seq=frame.seq)
            if verdict.restarted:
                self._metrics.board_restarts.labels(frame.source).inc()
                event(logging.INFO, "board_restarted", source=frame.source)
        stamp = self._stamper.stamp(frame.source, frame.t, received_ms)
        if stamp.explicit_t_refused:
            self._metrics.time_refused.labels(frame.source).inc()
            self._log.event(logging.WARNING, "explicit_time_refused", key=frame.source, source=frame.source,
                            t=frame.t, action="stamped with the time of receipt; check the board's clock")
        return NewFrame(frame.source, stamp.ts_ms, received_ms, frame.metrics, frame.vals)

    def _commit(self, frames: list[NewFrame], acked: list[tuple[int, int]], stamps: dict[str, int]) -> bool:
        try:
            self._spool.commit(frames, acked, stamps)
        except SpoolFull as full:
            kind = "cap" if full.cap_reached else "disk"
            self._metrics.spool_full.labels(kind).inc()
            if self._drop_oldest and self._spool.depth:
                dropped = self._spool.drop_oldest(max(len(frames), self._spool.depth // 100, 100))
                self._metrics.spool_dropped.inc(dropped)
                self._log.event(logging.WARNING, "spool_full_dropped_oldest", kind=kind, dropped=dropped,
                                detail=str(full))
            else:
                self._log.event(logging.ERROR, "spool_full", kind=kind, detail=str(full), waiting=len(frames),
                                action="reading paused until Cassandra drains the spool"
                                if kind == "cap" else "free disk space; reading paused meanwhile")
            return False
        self._metrics.spool_frames.set(self._spool.depth)
        if frames:
            self._on_spooled()
        return True
