"""The one retry schedule: Cassandra requests, reconnects and serial ports that fail to open back off alike."""

from __future__ import annotations


def backoff_s(attempts: int, max_s: float) -> float:
    """Seconds to wait after the attempts-th failure in a row: 0.2, 0.4, 0.8 ... up to max_s."""
    return min(max_s, 0.1 * 2 ** min(attempts, 10))
