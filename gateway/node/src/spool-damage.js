// The spool_damaged line and metrics (gateway/contract/spool.md, "A damaged spool"; logs.md): what the start did with
// a damaged spool file.

import { DETAIL_CHARS, event } from './logs.js';

const ACTION = 'the spool was rebuilt from what could be read and reading goes on; the damaged file is kept for '
  + 'inspection';
const COUNTERS_LOST = "; signed frames' counters could not all be read: a replay of a frame signed before the damage "
  + 'may be accepted until its source sends a newer one (check the SD card)';

/** recovered: the spool's (recovery.js), or null. */
export function reportDamage(recovered, metrics) {
  if (!recovered) return;
  metrics.spool_damaged.inc();
  metrics.spool_recovered_frames.inc(recovered.frames);
  metrics.spool_invalid_frames.inc(recovered.framesInvalid);
  const lost = recovered.framesSkippedIds;
  event('error', 'spool_damaged', {
    moved_to: recovered.aside,
    detail: recovered.detail.slice(0, DETAIL_CHARS),
    frames_recovered: recovered.frames,
    frames_invalid: recovered.framesInvalid,
    frames_lost_at_most: lost < 0 ? undefined : lost + recovered.framesInvalid,
    stamps: recovered.stamps,
    seqs: recovered.seqs,
    counters: recovered.counters,
    counters_complete: recovered.countersComplete,
    action: ACTION + (recovered.countersComplete ? '' : COUNTERS_LOST),
  });
}
