// The one retry schedule (gateway/contract/cassandra-writes.md, "Retry schedule"): Cassandra requests, connects,
// reconnects and serial ports that fail to open back off alike.

/**
 * Seconds to wait after the attempts-th failure in a row: 0.2, 0.4, 0.8 ... (the doubling stops at the 10th) up
 * to maxS; no jitter.
 * @param {number} attempts failures in a row (1 after the first)
 * @param {number} maxS the longest wait, seconds
 * @returns {number}
 */
export function backoffS(attempts, maxS) {
  return Math.min(maxS, 0.1 * 2 ** Math.min(attempts, 10));
}
