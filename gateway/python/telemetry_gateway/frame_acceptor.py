"""What the ingest does with each decoded frame before it goes to the spool: the bound on sources, the seq verdict
(duplicates dropped; gaps, restarts and conflicts counted), the timestamp, and the row to commit.

Seqs continue across a gateway restart: each source's last safe seq stored in the spool's source_seqs seeds the
tracker (SeqTracker.resume), so the first frame after the restart is judged against it; after an unclean stop (the
spool's WAL file was left) that first gap is also counted as frames possibly lost, and logged once per source
(gateway/contract/spool.md, "Seqs across a restart").
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from typing import Iterable

from .config import Config
from .frame import Frame
from .logs import RateLimitedLog, event
from .metrics import Metrics
from .reading_values import unpack_values
from .received import Received
from .seq_tracker import NEXT, SeqTracker
from .signing import Verifier
from .spool import NewFrame
from .spool.safe_seqs import Seqs
from .status_tally import SourceTally
from .timestamps import DAY_MS, Stamper


class FrameAcceptor:
    verifier: Verifier | None = None  # signed frames' checks (signing.md), before anything else sees a frame

    def __init__(self, config: Config, metrics: Metrics, receipt_stamps: dict[str, int], stored_seqs: Seqs,
                 unclean: bool) -> None:
        self._metrics = metrics
        self._log = RateLimitedLog()
        self.seq = SeqTracker(int(config.decode.duplicate_window_s * 1000))
        for source, (seq, _ts_ms) in stored_seqs.items():
            self.seq.resume(source, seq)
        # After an unclean stop: the stored (seq, ts_ms) of the sources whose first gap is still to be reported.
        self._persisted = dict(stored_seqs)
        self._unclean = unclean
        self.tally = SourceTally()  # for the status page; under its lock while reads are accepted
        self.stamper = Stamper(int(config.time.max_future_s * 1000), int(config.time.max_age_days * DAY_MS),
                               last_receipt=receipt_stamps, max_sources=config.decode.max_sources)
        # The sources whose state is kept, least recently seen first: at most max_sources (_new_source).
        self._max_sources = config.decode.max_sources
        self.recent: OrderedDict[str, None] = OrderedDict.fromkeys(self.stamper.sources())
        metrics.sources_tracked.set(len(self.recent))

    def accept_reads(self, reads: Iterable[Received]) -> tuple[list[NewFrame], Seqs]:
        """The rows to commit of these reads' frames, and the newest (seq, ts_ms) per source among them."""
        accepted: list[NewFrame] = []
        seqs: Seqs = {}
        formats: Counter[str] = Counter()
        with self.tally.lock:
            for frames_of_read, received_ms, _credit, trusted in reads:
                for frame in frames_of_read:
                    new = self.accept(frame, received_ms, trusted)
                    if new is not None:
                        accepted.append(new)
                        formats[frame.format] += 1
                        if frame.seq is not None:
                            seqs[frame.source] = (frame.seq, new.ts_ms)
        for kind, count in formats.items():  # the counter once per group, not once per frame
            self._metrics.frames_accepted.labels(kind).inc(count)
        return accepted, seqs

    def accept(self, frame: Frame, received_ms: int, trusted: bool = False) -> NewFrame | None:
        """A decoded frame received at received_ms (from a trusted input or not) → the row to commit, or None (a
        duplicate, or refused by the verifier: before the source counts as seen, so forged names evict no source,
        and before the alert rules see any frame)."""
        if self.verifier is not None:
            reason = self.verifier.verdict(frame, trusted)
            if reason is not None:
                self._metrics.rejects.labels(reason).inc()
                self.tally.reject(frame.source, reason, frame.source in self.verifier.policy.keys, received_ms)
                signature = frame.signature
                self._log.event(logging.WARNING, "frame_rejected", key=f"{frame.source}/{reason}", source=frame.source,
                                reason=reason, seq=frame.seq, **({} if signature is None else
                                                                 {"counter": signature.counter}))
                return None
        try:
            self.recent.move_to_end(frame.source)  # one C call for a known source
        except KeyError:
            self._new_source(frame.source)
        if frame.seq is not None:
            # frame[3:6] is (t, metrics, vals): a retransmission repeats all three; a conflict differs in one.
            verdict = self.seq.observe(frame.source, frame.seq, received_ms, hash(frame[3:6]))
            if verdict is not NEXT:  # most frames: no attribute to look at
                if verdict.duplicate:
                    self._metrics.duplicates.labels(frame.source).inc()
                    self.tally.duplicate(frame.source)
                    return None
                if verdict.conflict:
                    self._metrics.seq_conflicts.labels(frame.source).inc()
                    self._log.event(logging.WARNING, "seq_conflict", key=frame.source, source=frame.source,
                                    seq=frame.seq, action="stored: a recent frame had this seq with other values "
                                    "(two boards with one name?)")
                if verdict.missing:
                    self._metrics.seq_missing.labels(frame.source).inc(verdict.missing)
                    self.tally.gap(frame.source, verdict.missing)
                    self._log.event(logging.INFO, "seq_gap", key=frame.source, source=frame.source,
                                    missing=verdict.missing, seq=frame.seq)
                    if verdict.resumed and self._unclean:
                        self._possibly_lost(frame.source, verdict.missing)
                if verdict.restarted:
                    self._metrics.board_restarts.labels(frame.source).inc()
                    self._log.event(logging.INFO, "board_restarted", key=frame.source, source=frame.source)
        stamp = self.stamper.stamp(frame.source, frame.t, received_ms)
        if stamp.explicit_t_refused:
            self._metrics.time_refused.labels(frame.source).inc()
            self._log.event(logging.WARNING, "explicit_time_refused", key=frame.source, source=frame.source,
                            t=frame.t, action="stamped with the time of receipt; check the board's clock")
        self.tally.frame(frame.source, received_ms, stamp.ts_ms, (frame.metrics, frame.vals))
        self.tally.series.frame(frame.source, received_ms, unpack_values(frame.metrics, frame.vals))
        return NewFrame(frame.source, stamp.ts_ms, received_ms, frame.metrics, frame.vals)

    def _possibly_lost(self, source: str, missing: int) -> None:
        """A source's first gap after an unclean stop: what the crash may have cost it (an upper bound)."""
        seq, ts_ms = self._persisted.pop(source, (None, None))
        self._metrics.frames_possibly_lost.labels(source).inc(missing)
        event(logging.WARNING, "frames_possibly_lost", source=source, missing=missing, after_seq=seq,
              after_ts=ts_ms, action="frames numbered after the last stored seq, read by the run that crashed and "
              "not yet in Cassandra, are lost; some of these may have been stored")

    def _new_source(self, source: str) -> None:
        """A source not among the last max_sources seen. Past the bound the least recently seen one is forgotten
        everywhere (its seqs, its receipt stamp, its metric labels), so junk with ever new names cannot grow
        memory."""
        self.recent[source] = None
        if len(self.recent) > self._max_sources:
            old, _ = self.recent.popitem(last=False)
            self.seq.forget(old)
            self.stamper.forget(old)
            self.tally.forget(old)
            for counter in (self._metrics.duplicates, self._metrics.seq_missing, self._metrics.board_restarts,
                            self._metrics.seq_conflicts, self._metrics.time_refused,
                            self._metrics.frames_possibly_lost):
                counter.remove(old)  # a no-op for a label never used
            self._metrics.sources_evicted.inc()
            self._log.event(logging.WARNING, "source_evicted", source=old, tracked=len(self.recent),
                            action="forgot its seqs and metric labels; raise [decode] max_sources if it is real")
        else:
            self._metrics.sources_tracked.set(len(self.recent))
