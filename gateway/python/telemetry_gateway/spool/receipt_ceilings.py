"""Receipt stamps under the deferred spool policy (gateway/contract/spool.md, "`deferred` in detail").

The stored receipt_stamps row of a source must never be below a stamp given to one of its frames, or a restart on
a clock that went back (a Pi has no real-time clock) could stamp a new frame on the key of an old one and overwrite
it. With every frame committed that row is simply written with the frames; with frames that are never written, it
is written ahead as a ceiling (stamp + LEAD_MS), and again only when a stamp passes it: one small commit a
minute instead of one per frame (a commit's fsynced WAL page is the SD card's main wear on a healthy link, so
the lead sets it). Pure bookkeeping: the spool commits the rows and then calls stored().
"""

from __future__ import annotations

LEAD_MS = 60_000  # how far a ceiling is set above the stamp that needed it: after a crash, the most a stamp is late
REFRESH_MS = LEAD_MS // 2  # a ceiling this close to its source's last stamp is raised with the next one written


class ReceiptCeilings:
    def __init__(self, stored: dict[str, int], max_sources: int) -> None:
        self._stored = dict(stored)  # what receipt_stamps holds
        self._given: dict[str, int] = {}  # the last stamp given in this run, per source
        self._max_sources = max_sources

    def rows_for(self, stamps: dict[str, int], along: bool = False) -> dict[str, int]:
        """The receipt_stamps rows to commit before these newly given stamps count: none while every stamp is
        below its source's ceiling, else a new ceiling for each source stamped in this run whose ceiling is near.
        along: a commit is made anyway, so the near ceilings go with it even if no stamp passed its own."""
        if not along and not any(ts > self._stored.get(source, -1) for source, ts in stamps.items()):
            return {}
        given = {**self._given, **stamps}
        return {source: ts + LEAD_MS for source, ts in given.items()
                if self._stored.get(source, -1) < ts + REFRESH_MS}

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
