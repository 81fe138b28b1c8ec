"""What may leave the spool: each taken chunk of frames is followed until Cassandra has all of it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from .spool import SpooledFrame

KNOWN_DAYS_MAX = 10_000  # (source, day) pairs whose source_days row is known written; cleared past it


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


class WriteLedger:
    """Counts the requests taken and not yet succeeded (outstanding: ready, in flight or awaiting retry), moves a
    chunk to `written` when its readings and source_days requests all succeeded, and gives back the chunks whose
    day_changes request then succeeded: only those may be acknowledged to the spool (an analytics job that sees
    a day change must find its readings)."""

    def __init__(self) -> None:
        self.outstanding = 0
        self.written: list[Chunk] = []  # readings written, day_changes not yet
        self.known_days: set[tuple[str, date]] = set()  # whose source_days row is written

    @property
    def idle(self) -> bool:
        return self.outstanding == 0 and not self.written

    def expect(self, requests: int, chunk: Chunk | None = None) -> None:
        """requests more were taken, owned by chunk (or by a DayChanges / nobody when chunk is None)."""
        self.outstanding += requests
        if chunk is not None:
            chunk.remaining = requests

    def succeeded(self, owner: Chunk | DayChanges | None) -> tuple[Chunk | None, list[Chunk]]:
        """One request succeeded. Returns the chunk whose readings are now all written (or None) and the chunks
        now fully written (a DayChanges' chunks), whose frames may leave the spool."""
        self.outstanding -= 1
        if isinstance(owner, Chunk):
            owner.remaining -= 1
            if owner.remaining == 0:
                self.written.append(owner)
                return owner, []
        elif isinstance(owner, DayChanges):
            if len(self.known_days) > KNOWN_DAYS_MAX:
                self.known_days.clear()  # junk sources must not grow it; forgetting only repeats idempotent writes
            for chunk in owner.chunks:
                self.known_days.update(chunk.days)
            return None, owner.chunks
        return None, []

    def take_written(self) -> DayChanges:
        """The chunks waiting for their day_changes write, handed to it."""
        chunks, self.written = self.written, []
        return DayChanges(chunks)
