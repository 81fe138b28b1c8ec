// The /healthz answer (gateway/contract/status.md, "/healthz"): 200 ok, or 503 with the reason of the first check
// that fails. A pure function of the state the status page reads, so a service manager, a container's health check
// or a load balancer sees the same rule in every gateway.

/**
 * @param {{nowMs: number, startedMs: number, cassandraDownSinceMs: number|null, oldestUnsentMs: number|null,
 *   newestFrameMs: number|null}} state cassandraDownSinceMs null while Cassandra is up; oldestUnsentMs: the receipt of
 *   the oldest frame in the spool file; newestFrameMs: the newest last_frame of any source
 * @param {{cassandraDownMs: number, spoolLagMs: number, silentMs: number}} limits
 * @returns {[number, string]} status and reason
 */
export function health(state, limits) {
  const now = state.nowMs;
  const seconds = (since) => Math.floor((now - since) / 1000);
  if (state.cassandraDownSinceMs !== null && now - state.cassandraDownSinceMs > limits.cassandraDownMs) {
    return [503, `cassandra unreachable for ${seconds(state.cassandraDownSinceMs)} s`];
  }
  if (state.oldestUnsentMs !== null && now - state.oldestUnsentMs > limits.spoolLagMs) {
    return [503, `spool not draining: oldest frame ${seconds(state.oldestUnsentMs)} s old`];
  }
  const since = state.newestFrameMs ?? state.startedMs;
  if (now - since > limits.silentMs) return [503, `no frame from any board for ${seconds(since)} s`];
  return [200, 'ok'];
}
