// The one retry schedule (the Python gateway's backoff.py): Cassandra requests, reconnects and serial ports that
// fail to open back off alike.

/**
 * Seconds to wait after the attempts-th failure in a row: 0.2, 0.4, 0.8 ... up to maxS.
 * @param {number} attempts failures in a row (1 after the first)
 * @param {number} maxS the longest wait, seconds
 * @returns {number}
 */
export function backoffS(attempts, maxS) {
  return Math.min(maxS, 0.1 * 2 ** Math.min(attempts, 10));
}
