// What the ingest does with each decoded frame before it goes to the spool: the bound on sources, the seq verdict
// (duplicates dropped; gaps, restarts and conflicts counted), the timestamp, and the row to commit.
//
// Seqs continue across a gateway restart: each source's last safe seq stored in the spool's source_seqs seeds the
// tracker (seq-tracker.js resume()), so the first frame after the restart is judged against it; after an unclean
// stop (the spool's WAL file was left) that first gap is also counted as frames possibly lost, and logged once
// per source (gateway/contract/spool.md, "Seqs across a restart").

import { RateLimitedLog, event } from './logs.js';
import { NEXT, SeqTracker } from './seq-tracker.js';
import { packValues } from './reading-values.js';
import { SourceTally } from './status-tally.js';
import { DAY_MS, Stamper } from './timestamps.js';

export class FrameAcceptor {
  /**
   * @param {object} config the gateway's config ([decode], [time])
   * @param {object} metrics createMetrics()'s
   * @param {Map<string, number>} receiptStamps the spool's last receipt stamps
   * @param {Map<string, [number, number]>} storedSeqs the spool's last safe [seq, ts_ms] per source
   * @param {boolean} unclean the spool's last run did not stop cleanly
   */
  constructor(config, metrics, receiptStamps, storedSeqs = new Map(), unclean = false) {
    this.metrics = metrics;
    this.log = new RateLimitedLog();
    this.seq = new SeqTracker(Math.trunc(config.decode.duplicate_window_s * 1000));
    this.maxSources = config.decode.max_sources;
    this.stamper = new Stamper(Math.trunc(config.time.max_future_s * 1000),
      Math.trunc(config.time.max_age_days * DAY_MS), receiptStamps, this.maxSources);
    // The sources whose state is kept, least recently seen first (a Map keeps insertion order).
    this.recent = new Map(this.stamper.sources().map((source) => [source, true]));
    metrics.sources_tracked.set(this.recent.size);
    for (const [source, [seq]] of storedSeqs) this.seq.resume(source, seq);
    // After an unclean stop: the stored [seq, ts_ms] of the sources whose first gap is still to be reported.
    this.possiblyLost = unclean ? new Map(storedSeqs) : new Map();
    this.tally = new SourceTally(); // for the status page
  }

  /** The rows to commit of these reads' frames ({frames, receivedMs} each). */
  acceptReads(reads) {
    const accepted = [];
    const formats = new Map();
    for (const read of reads) {
      for (const frame of read.frames) {
        const row = this.accept(frame, read.receivedMs, read.trusted === true);
        if (row !== null) {
          accepted.push(row);
          formats.set(frame.format, (formats.get(frame.format) ?? 0) + 1);
        }
      }
    }
    for (const [format, count] of formats) this.metrics.frames_accepted.inc({ format }, count); // once per group
    return accepted;
  }

  /** A decoded frame received at receivedMs → the row to commit ({source, ts_ms, received_ms, metrics, vals, seq}),
   * or null (a duplicate, or refused by the verifier: before the source counts as seen, so forged names evict no
   * source, and before the alert rules see any frame). trusted: from a trusted input (signing.md). */
  accept(frame, receivedMs, trusted = false) {
    const { source } = frame;
    const refused = this.verifier?.verdict(frame, trusted) ?? null;
    if (refused !== null) {
      this.metrics.rejects.inc({ reason: refused });
      this.tally.reject(source, refused, this.verifier.policy.keys.has(source), receivedMs);
      this.log.event('warning', 'frame_rejected', { key: `${source}/${refused}`, source, reason: refused,
        seq: frame.seq, ...(frame.counter === undefined ? {} : { counter: frame.counter }) });
      return null;
    }
    if (this.recent.has(source)) {
      this.recent.delete(source);
      this.recent.set(source, true);
    } else {
      this.newSource(source);
    }
    const packed = packValues(frame.values);
    if (frame.seq !== null) {
      // A retransmission repeats t, metrics and values; a conflict differs in one of them.
      const content = `${frame.t}|${packed.metrics}|${packed.vals.toString('latin1')}`;
      const verdict = this.seq.observe(source, frame.seq, receivedMs, content);
      if (verdict !== NEXT && !this.judged(frame, verdict)) return null;
    }
    const stamp = this.stamper.stamp(source, frame.t, receivedMs);
    if (stamp.explicit_t_refused) {
      this.metrics.time_refused.inc({ source });
      this.log.event('warning', 'explicit_time_refused', {
        key: source, source, t: frame.t, action: "stamped with the time of receipt; check the board's clock",
      });
    }
    this.tally.frame(source, receivedMs, stamp.ts_ms, frame.values);
    this.tally.series.frame(source, receivedMs, frame.values);
    return { source, ts_ms: stamp.ts_ms, received_ms: receivedMs, metrics: packed.metrics, vals: packed.vals,
      seq: frame.seq };
  }

  /** Counts a verdict other than NEXT; false for a duplicate (dropped). */
  judged(frame, verdict) {
    const { source } = frame;
    if (verdict.duplicate) {
      this.metrics.duplicates.inc({ source });
      this.tally.duplicate(source);
      return false;
    }
    if (verdict.conflict) {
      this.metrics.seq_conflicts.inc({ source });
      this.log.event('warning', 'seq_conflict', {
        key: source, source, seq: frame.seq,
        action: 'stored: a recent frame had this seq with other values (two boards with one name?)',
      });
    }
    if (verdict.missing) {
      this.metrics.seq_missing.inc({ source }, verdict.missing);
      this.tally.gap(source, verdict.missing);
      this.log.event('info', 'seq_gap', { key: source, source, missing: verdict.missing, seq: frame.seq });
    }
    if (verdict.restarted) {
      this.metrics.board_restarts.inc({ source });
      this.log.event('info', 'board_restarted', { key: source, source });
    }
    const stored = this.possiblyLost.get(source);
    if (stored !== undefined && (verdict.resumed || verdict.restarted)) { // its first frame after the restart
      this.possiblyLost.delete(source);
      if (verdict.missing) {
        this.metrics.frames_possibly_lost.inc({ source }, verdict.missing);
        event('warning', 'frames_possibly_lost', { source, missing: verdict.missing, after_seq: stored[0],
          after_ts: stored[1], action: 'frames numbered after the last stored seq, read by the run that crashed and '
            + 'not yet in Cassandra, are lost; some of these may have been stored' });
      }
    }
    return true;
  }

  /** A source not among the last max_sources seen: past the bound the least recently seen one is forgotten
   * everywhere (its seqs, its receipt stamp, its metric labels), so junk with ever new names cannot grow memory. */
  newSource(source) {
    this.recent.set(source, true);
    if (this.recent.size > this.maxSources) {
      const old = this.recent.keys().next().value;
      this.recent.delete(old);
      this.seq.forget(old);
      this.stamper.forget(old);
      this.tally.forget(old);
      this.possiblyLost.delete(old);
      const m = this.metrics;
      for (const counter of [m.duplicates, m.seq_missing, m.board_restarts, m.seq_conflicts, m.time_refused,
        m.frames_possibly_lost]) {
        counter.remove({ source: old });
      }
      m.sources_evicted.inc();
      this.log.event('warning', 'source_evicted', {
        source: old, tracked: this.recent.size,
        action: 'forgot its seqs and metric labels; raise [decode] max_sources if it is real',
      });
    } else {
      this.metrics.sources_tracked.set(this.recent.size);
    }
  }
}
