// The signing counters' state logged at start (gateway/contract/signing.md): re-keyed nodes, and keys with no
// stored counter at all.

import { event } from './logs.js';

/** At start: counters that start afresh (a re-keyed node; every counter, when keys meet an empty table). */
export function logCounterKeys(verifier, spoolPath) {
  for (const [source, counter] of verifier.rekeyed) {
    event('warning', 'signing_counter_rekeyed', { source, counter,
      action: 'its key changed: counters start afresh under the new key' });
  }
  if (verifier.policy.keys.size > 0 && verifier.counters.size === 0 && verifier.rekeyed.length === 0) {
    event('warning', 'signing_counters_empty', { keys: verifier.policy.keys.size, spool: spoolPath,
      action: 'no counter is stored: payloads recorded under the current keys would be accepted again; '
        + 'after a new or lost spool re-key the boards (signing.md)' });
  }
}
