"""Receipt stamps under the deferred spool policy (gateway/contract/spool.md, "`deferred` in detail").

The stored receipt_stamps row of a source must never be below a stamp given to one of its frames, or a restart on
a clock that went back (a Pi has no real-time clock) could stamp a new frame on the key of an old one and overwrite
it. With every frame committed that row is simply written with the frames; with frames that are never written, it
is written ahead as a ceiling, the later of the wall clock + LEAD_MS and the stamp + MARGIN_MS, and again only
when a stamp passes it: one small commit a minute instead of one per frame (a commit's fsynced WAL page is the SD
card's main wear on a healthy link, so the lead sets it). Pure bookkeeping: the caller reads the clock, the spool
commits the rows and then calls stored().

Why the wall clock and not the stamp: after a crash a source's stamps continue right above its ceiling, late by up
to LEAD_MS, 1 ms apart until the clock passes it. A ceiling set above such a late stamp (+ LEAD_MS) would carry the
lateness into the next run, a minute more per crash. Set above the clock, a row is at most LEAD_MS ahead of the
clock that wrote it (or MARGIN_MS above a stamp already late by more than LEAD_MS - MARGIN_MS, which a later run
starting at least MARGIN_MS after that write gives back), so after any crash a stamp is at most LEAD_MS late.
Commits stay about one a minute while stamps are late: a stamp given at wall time t is at most max(t, the last
stamp + the frames since), so it passes a ceiling C >= now + LEAD_MS only a minute after C was written, or after
more than LEAD_MS - (the lateness) >= MARGIN_MS frames of that source; and a row is only raised on its own when
a stamp passes it (near rows ride with commits made anyway).
"""

from __future__ import annotations

from ..contract_constants import contract_number

# How far a ceiling is set above the wall clock: after a crash, the most a stamp is late.
LEAD_MS = contract_number("receipt_ceiling_lead_ms")
# A ceiling this close to its source's last stamp (or the clock) is raised with the next one.
REFRESH_MS = contract_number("receipt_ceiling_near_ms")
# The least a ceiling is above the stamp that needed it (late stamps, a clock that went back).
MARGIN_MS = contract_number("receipt_ceiling_margin_ms")


class ReceiptCeilings:
    def __init__(self, stored: dict[str, int], max_sources: int) -> None:
        self._stored = dict(stored)  # what receipt_stamps holds
        self._given: dict[str, int] = {}  # the last stamp given in this run, per source
        self._max_sources = max_sources

    def rows_for(self, stamps: dict[str, int], now_ms: int, along: bool = False) -> dict[str, int]:
        """The receipt_stamps rows to commit before these newly given stamps count: none while every stamp is
        below its source's ceiling, else a new ceiling for each source stamped in this run whose stamp passed it or
        whose ceiling is near (within REFRESH_MS of its last stamp, or of the clock while that stamp is late).
        now_ms: the wall clock. along: a commit is made anyway, so the near ceilings go with it even if no stamp
        passed its own."""
        if not along and not any(ts > self._stored.get(source, -1) for source, ts in stamps.items()):
            return {}
        given = {**self._given, **stamps}
        rows = {}
        for source, ts in given.items():
            stored = self._stored.get(source, -1)
            if stored < ts or stored < min(ts, now_ms) + REFRESH_MS:
                rows[source] = max(now_ms + LEAD_MS, ts + MARGIN_MS)
        return rows

    def final_rows(self, stamps: dict[str, int]) -> dict[str, int]:
        """At a clean stop: every source stamped in this run at its real last stamp, so the next run's stamps are
        not pushed ahead."""
        return {**self._given, **stamps}

    def stored(self, stamps: dict[str, int], rows: dict[str, int]) -> None:
        """The commit holding rows (for these stamps) is done."""
        self._given.update(stamps)
        self._stored.update(rows)
        if len(self._given) > 2 * self._max_sources:  # junk sources with ever new names: keep the newest
            keep = sorted(self._given, key=self._given.__getitem__)[-self._max_sources:]
            self._given = {source: self._given[source] for source in keep}
            self._stored = {source: self._stored[source] for source in keep if source in self._stored}
