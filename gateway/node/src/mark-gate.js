// Day marks first (gateway/contract/day-marks.md): a readings request for (source, day) goes out, each attempt,
// only while that day has a fresh mark (DayMarks). A chunk's days without one get a `day_changes` write first (one
// UNLOGGED batch, stamped when each attempt is sent), and their readings requests wait for it (MarkWrite).
//
// No clock of its own: the sender gives the times, so one clock drives the whole sender.

import { DayMarks, dayKey } from './day-marks.js';
import { dayChangesBatch } from './reading-batches.js';
import { Request } from './request-pump.js';
import { MarkWrite } from './write-ledger.js';

export class MarkGate {
  /** pump: the sender's RequestPump; ledger: its WriteLedger. */
  constructor(pump, ledger) {
    this.pump = pump;
    this.ledger = ledger;
    this.marks = new DayMarks();
    this.parked = 0; // readings requests waiting for a mark of their day
  }

  /**
   * The requests that may be sent now. The readings requests of days without a fresh mark wait for one (a mark
   * write for those with none in flight is started here, ahead of everything else).
   */
  hold(requests, days, nowMs) {
    const [unmarked, toMark] = this.marks.needs(days, nowMs);
    if (unmarked.size === 0) return requests;
    if (toMark.length) {
      const mark = new MarkWrite(toMark);
      this.marks.begin(toMark, mark);
      this.ledger.expect(1);
      this.pump.add([new Request(0, null, mark)], true); // its statement is made per attempt
    }
    const ready = [];
    for (const request of requests) {
      if (request.day !== null && unmarked.has(dayKey(...request.day))) {
        this.marks.pending(...request.day).waiting.push(request);
        this.parked += 1;
      } else {
        ready.push(request);
      }
    }
    return ready;
  }

  /**
   * The pump's last word before each attempt: a mark is stamped now (wall: a Date); a readings request goes only
   * while its day's mark is fresh (it may have gone stale while the request waited for a retry), else it waits for
   * a new one.
   */
  beforeSend(request, nowMs, wall) {
    const { owner } = request;
    if (owner instanceof MarkWrite) {
      owner.sentAt = nowMs;
      request.statement = dayChangesBatch(owner.days, wall);
      return true;
    }
    if (request.day === null || this.marks.isFresh(...request.day, nowMs)) return true;
    return this.hold([request], [request.day], nowMs).length > 0;
  }

  /** Cassandra acknowledged mark: its days are fresh, and the readings waiting for it go first. */
  marked(mark, nowMs) {
    this.marks.acknowledged(mark, mark.days, mark.sentAt, nowMs);
    this.parked -= mark.waiting.length;
    this.pump.add(mark.waiting, true);
    mark.waiting = [];
  }
}
