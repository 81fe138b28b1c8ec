// Receipt stamps under the deferred spool policy (gateway/contract/spool.md, "`deferred` in detail").
//
// A source's receipt_stamps row must never be below a stamp given to one of its frames, or a restart on a clock
// that went back (a Pi has no real-time clock) could stamp a new frame on the key of an old one and overwrite it.
// With every frame committed the row is simply written with the frames; with frames that are never written it is
// written ahead, as a ceiling: the later of the wall clock + LEAD_MS and the stamp + MARGIN_MS, and again only when
// a stamp passes it: one small commit a minute instead of one per frame (a commit's fsynced WAL page is the SD
// card's main wear on a healthy link, so the lead sets it). Pure bookkeeping: the caller reads the clock, the spool
// commits the rows, then calls committed().
//
// Why the wall clock and not the stamp: after a crash a source's stamps continue right above its ceiling, late by up
// to LEAD_MS, 1 ms apart until the clock passes it. A ceiling set above such a late stamp (+ LEAD_MS) would carry
// the lateness into the next run, a minute more per crash. Set above the clock, a row is at most LEAD_MS ahead of
// the clock that wrote it (or MARGIN_MS above a stamp already late by more than LEAD_MS - MARGIN_MS, which a later
// run starting at least MARGIN_MS after that write gives back), so after any crash a stamp is at most LEAD_MS late.
// Commits stay about one a minute while stamps are late: a stamp given at wall time t is at most max(t, the last
// stamp + the frames since), so it passes a ceiling C >= now + LEAD_MS only a minute after C was written, or after
// more than LEAD_MS - (the lateness) >= MARGIN_MS frames of that source; and a row is only raised on its own when a
// stamp passes it (near rows ride with commits made anyway).

import { contractNumber } from '../contract-constants.js';

// How far a ceiling is set above the wall clock: after a crash, the most a stamp is late.
export const LEAD_MS = contractNumber('receipt_ceiling_lead_ms');
// A ceiling this close to its source's last stamp (or the clock, while that stamp is late) is raised with the next
// one written.
export const REFRESH_MS = contractNumber('receipt_ceiling_near_ms');
// The least a ceiling is above the stamp that needed it (late stamps, a clock that went back).
export const MARGIN_MS = contractNumber('receipt_ceiling_margin_ms');

export class ReceiptCeilings {
  /** stored: the receipt_stamps rows, [source, ms] pairs or a Map; maxSources: [decode] max_sources. */
  constructor(stored, maxSources) {
    this.stored = new Map(stored); // what receipt_stamps holds
    this.given = new Map(); // the last stamp given in this run, per source
    this.maxSources = maxSources;
  }

  /** The receipt_stamps rows ([source, ms] pairs) to commit before these newly given stamps count: none while
   * every stamp is at or below its source's ceiling, else a new ceiling for each source stamped in this run whose
   * stamp passed it or whose ceiling is near (within REFRESH_MS of its last stamp, or of the clock while that stamp
   * is late). nowMs: the wall clock. along: a commit is made anyway, so the near ceilings go with it even if no
   * stamp passed its own. */
  rowsFor(stamps, nowMs, along = false) {
    if (!along && !stamps.some(([source, ts]) => ts > (this.stored.get(source) ?? -Infinity))) return [];
    const rows = [];
    for (const [source, ts] of new Map([...this.given, ...stamps])) {
      const stored = this.stored.get(source) ?? -Infinity;
      if (stored < ts || stored < Math.min(ts, nowMs) + REFRESH_MS) {
        rows.push([source, Math.max(nowMs + LEAD_MS, ts + MARGIN_MS)]);
      }
    }
    return rows;
  }

  /** At a clean stop: every source stamped in this run at its real last stamp (where the row says otherwise), so
   * the next run's stamps are not pushed ahead. */
  finalRows() {
    return [...this.given].filter(([source, ts]) => this.stored.get(source) !== ts);
  }

  /** The commit holding rows (made for these stamps) is done. */
  committed(stamps, rows) {
    for (const [source, ts] of stamps) this.given.set(source, ts);
    for (const [source, ms] of rows) this.stored.set(source, ms);
    this.given = this.bounded(this.given);
    this.stored = this.bounded(this.stored);
  }

  /** Junk sources with ever new names: past twice maxSources only the maxSources highest values are kept
   * (forgetting a stored row costs one more row written later; forgetting a stamp leaves its row a ceiling). */
  bounded(map) {
    if (map.size <= 2 * this.maxSources) return map;
    return new Map([...map].sort((a, b) => a[1] - b[1]).slice(-this.maxSources));
  }
}
