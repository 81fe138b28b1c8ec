"""What may leave the spool: each taken chunk of frames is followed until Cassandra has all of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from .contract_constants import contract_number
from .request_pump import Request
from .spool import SpooledFrame

# (source, day) pairs whose source_days row is known written; cleared past it.
KNOWN_DAYS_MAX = contract_number("known_days_max")


@dataclass
class Chunk:
    """Frames taken together: consecutive in the spool, so acknowledged as one id range."""
    first_id: int
    last_id: int
    frames: list[SpooledFrame]  # let go once the readings are written
    rows: int
    days: list[tuple[str, date]]
    remaining: int = 0  # its readings and source_days requests not yet succeeded


@dataclass(eq=False)
class MarkWrite:
    """A day_changes write marking days (gateway/contract/day-marks.md), and the readings requests waiting for it.
    Each attempt is stamped when it is sent (sent_at: the gateway's monotonic clock)."""
    days: list[tuple[str, date]]
    waiting: list[Request] = field(default_factory=list)
    sent_at: float = 0.0


class WriteLedger:
    """Counts the requests taken and not yet succeeded (outstanding: ready, waiting for a mark, in flight or
    awaiting retry) and gives back each chunk once its readings and source_days requests all succeeded: its frames
    may then leave the spool (their days were marked before the readings were sent, so an analytics job that
    sees a day change finds them)."""

    def __init__(self) -> None:
        self.outstanding = 0
        self.known_days: set[tuple[str, date]] = set()  # whose source_days row is written

    @property
    def idle(self) -> bool:
        return self.outstanding == 0

    def expect(self, requests: int, chunk: Chunk | None = None) -> None:
        """requests more were taken, owned by chunk (or by a MarkWrite / nobody when chunk is None)."""
        self.outstanding += requests
        if chunk is not None:
            chunk.remaining = requests

    def succeeded(self, owner: Chunk | MarkWrite | None) -> Chunk | None:
        """One request succeeded. Returns the chunk now fully written (its frames may leave the spool), or None."""
        self.outstanding -= 1
        if isinstance(owner, Chunk):
            owner.remaining -= 1
            if owner.remaining == 0:
                if len(self.known_days) > KNOWN_DAYS_MAX:
                    self.known_days.clear()  # junk sources must not grow it; forgetting only repeats idempotent writes
                self.known_days.update(owner.days)
                return owner
        return None
