// Deferred policy: held frames are committed once due even when nothing else happens (gateway/contract/spool.md).
// One timer, for the oldest held frame; none while nothing is held.

export class FlushTimer {
  /** onDue(): called when the armed delay is over. */
  constructor(onDue) {
    this.onDue = onDue;
    this.timer = null;
    this.at = 0;
  }

  get armed() {
    return this.timer !== null;
  }

  /** delayMs: until the oldest held frame is due (null: nothing held, no wake-up). An earlier wake-up stays. */
  arm(delayMs) {
    if (delayMs === null) {
      this.clear();
      return;
    }
    const at = performance.now() + delayMs;
    if (this.timer !== null && this.at <= at) return; // set for then or earlier
    this.clear();
    this.at = at;
    // Rounded up: a timer that fires a fraction of a ms early would find nothing due and arm another.
    this.timer = setTimeout(() => { this.timer = null; this.onDue(); }, Math.ceil(delayMs));
  }

  clear() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
