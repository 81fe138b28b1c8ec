"""The spool_damaged line and metrics (gateway/contract/spool.md, "A damaged spool"; logs.md): what the start did
with a damaged spool file."""

from __future__ import annotations

import logging

from .logs import DETAIL_CHARS, event
from .metrics import Metrics
from .spool import Recovered

ACTION = "the spool was rebuilt from what could be read and reading goes on; the damaged file is kept for inspection"
COUNTERS_LOST = ("; signed frames' counters could not all be read: a replay of a frame signed before the damage may "
                 "be accepted until its source sends a newer one (check the SD card)")


def report_damage(recovered: Recovered | None, metrics: Metrics) -> None:
    if recovered is None:
        return
    metrics.spool_damaged.inc()
    metrics.spool_recovered_frames.inc(recovered.frames)
    metrics.spool_invalid_frames.inc(recovered.frames_invalid)
    lost = recovered.frames_skipped_ids
    event(logging.ERROR, "spool_damaged", moved_to=str(recovered.aside), detail=recovered.detail[:DETAIL_CHARS],
          frames_recovered=recovered.frames, frames_invalid=recovered.frames_invalid,
          frames_lost_at_most=None if lost < 0 else lost + recovered.frames_invalid,
          stamps=recovered.stamps, seqs=recovered.seqs, counters=recovered.counters,
          counters_complete=recovered.counters_complete,
          action=ACTION + ("" if recovered.counters_complete else COUNTERS_LOST))
