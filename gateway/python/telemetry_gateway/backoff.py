"""The one retry schedule (gateway/contract/cassandra-writes.md, "Retry schedule"): Cassandra requests, connects,
reconnects and serial ports that fail to open back off alike."""

from __future__ import annotations

from .contract_constants import contract_number, contract_seconds

BASE_S = contract_seconds("retry_base_ms")
DOUBLINGS_MAX = contract_number("retry_doublings_max")


def backoff_s(attempts: int, max_s: float) -> float:
    """Seconds to wait after the attempts-th failure in a row: 0.2, 0.4, 0.8 ... (the doubling stops at the 10th)
    up to max_s; no jitter."""
    return min(max_s, BASE_S * 2 ** min(attempts, DOUBLINGS_MAX))
