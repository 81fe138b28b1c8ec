"""The signing counters' state logged at start (gateway/contract/signing.md): re-keyed nodes, and keys with no
stored counter at all."""

from __future__ import annotations

import logging

from .logs import event
from .signing import Verifier


def log_counter_keys(verifier: Verifier, spool_path: str) -> None:
    """At start: counters that start afresh (a re-keyed node; every counter, when keys meet an empty table)."""
    for source, counter in verifier.rekeyed:
        event(logging.WARNING, "signing_counter_rekeyed", source=source, counter=counter,
              action="its key changed: counters start afresh under the new key")
    if verifier.policy.keys and not verifier.counters and not verifier.rekeyed:
        event(logging.WARNING, "signing_counters_empty", keys=len(verifier.policy.keys), spool=spool_path,
              action="no counter is stored: payloads recorded under the current keys would be accepted again; "
              "after a new or lost spool re-key the boards (signing.md)")
