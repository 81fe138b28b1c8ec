"""The /healthz answer (gateway/contract/status.md, "/healthz"): 200 ok, or 503 with the reason of the first check
that fails. A pure function of the state the status page reads, so a service manager, a container's health check
or a load balancer sees the same rule in every gateway."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HealthLimits:
    cassandra_down_ms: float
    spool_lag_ms: float
    silent_ms: float


@dataclass(frozen=True)
class HealthState:
    now_ms: int
    started_ms: int
    cassandra_down_since_ms: int | None  # None while Cassandra is up
    oldest_unsent_ms: int | None  # receipt of the oldest frame in the spool file
    newest_frame_ms: int | None  # the newest last_frame of any source


def health(state: HealthState, limits: HealthLimits) -> tuple[int, str]:
    now = state.now_ms
    if state.cassandra_down_since_ms is not None and now - state.cassandra_down_since_ms > limits.cassandra_down_ms:
        return 503, f"cassandra unreachable for {(now - state.cassandra_down_since_ms) // 1000} s"
    if state.oldest_unsent_ms is not None and now - state.oldest_unsent_ms > limits.spool_lag_ms:
        return 503, f"spool not draining: oldest frame {(now - state.oldest_unsent_ms) // 1000} s old"
    since = state.started_ms if state.newest_frame_ms is None else state.newest_frame_ms
    if now - since > limits.silent_ms:
        return 503, f"no frame from any board for {(now - since) // 1000} s"
    return 200, "ok"
