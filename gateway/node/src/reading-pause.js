// Whether the inputs may read on: reading pauses while the spool has no room (its cap with when_full = pause, or a
// full disk), with a metric and a log line, and resumes once the spool says there is room again. The credits of
// committed reads are withheld meanwhile, so the readers pause and the bytes wait in the kernel, not in memory.
// With when_full = drop_oldest a spool at its cap drops its oldest frames instead.

import { contractNumber } from './contract-constants.js';
import { RateLimitedLog, event } from './logs.js';

const DROP_MIN_FRAMES = contractNumber('drop_oldest_min_frames'); // when_full = drop_oldest: 1 %, at least this

export const ROOM_CHECK_MS = 250; // while reading is paused, how often the spool is asked whether there is room again

export class ReadingPause {
  constructor(spool, metrics, dropOldest) {
    this.spool = spool;
    this.metrics = metrics;
    this.dropOldest = dropOldest;
    this.log = new RateLimitedLog();
    this.paused = null; // "cap" or "disk" while reading is paused
    this.withheld = []; // credits of committed reads, back once there is room
    this.nextCheck = 0;
  }

  /** Credits of committed reads: they go back at the next room check that finds room (due now). */
  withhold(credits) {
    this.withheld.push(...credits);
    this.nextCheck = 0;
  }

  /** The withheld credits go back if the room check, due every ROOM_CHECK_MS, finds room. */
  releaseIfRoom(now) {
    if (this.withheld.length && now >= this.nextCheck) {
      this.nextCheck = now + ROOM_CHECK_MS;
      if (this.hasRoom()) {
        for (const credits of this.withheld) credits.release();
        this.withheld = [];
      }
    }
  }

  /** Whether reading may go on; pauses it (with a metric and a log line) when the spool has no room. */
  hasRoom() {
    const room = this.spool.room();
    if (room === null) {
      if (this.paused !== null) {
        event('info', 'spool_room_again', { kind: this.paused, spooled_frames: this.spool.depth,
          action: 'reading resumed' });
        this.paused = null;
        this.metrics.reading_paused.set(0);
      }
      return true;
    }
    if (room === 'cap' && this.dropOldest && this.spool.depth) {
      const dropped = this.spool.dropOldest(Math.max(Math.floor(this.spool.depth / 100), DROP_MIN_FRAMES));
      this.metrics.spool_dropped.inc(dropped);
      this.metrics.spool_full.inc({ kind: room });
      this.log.event('warning', 'spool_full_dropped_oldest', { key: room, kind: room, dropped });
      return this.spool.room() === null;
    }
    this.pause(room);
    return false;
  }

  /** Reading pauses: kind "cap" or "disk"; detail: more fields for the log line. */
  pause(kind, detail = {}) {
    if (this.paused === kind) return;
    this.paused = kind;
    this.metrics.spool_full.inc({ kind });
    this.metrics.reading_paused.set(1);
    this.log.event('error', 'spool_full', {
      key: kind, kind, spooled_frames: this.spool.depth, ...detail,
      action: kind === 'cap' ? 'reading paused until Cassandra drains the spool'
        : 'reading paused; free disk space (the spool still drains)',
    });
  }
}
