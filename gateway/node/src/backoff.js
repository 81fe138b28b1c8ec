// The one retry schedule (gateway/contract/cassandra-writes.md, "Retry schedule"): Cassandra requests, connects,
// reconnects and serial ports that fail to open back off alike.

import { contractNumber } from './contract-constants.js';

const BASE_S = contractNumber('retry_base_ms') / 1000;
const DOUBLINGS_MAX = contractNumber('retry_doublings_max');

/**
 * Seconds to wait after the attempts-th failure in a row: 0.2, 0.4, 0.8 ... (the doubling stops at the 10th) up
 * to maxS; no jitter.
 * @param {number} attempts failures in a row (1 after the first)
 * @param {number} maxS the longest wait, seconds
 * @returns {number}
 */
export function backoffS(attempts, maxS) {
  return Math.min(maxS, BASE_S * 2 ** Math.min(attempts, DOUBLINGS_MAX));
}
