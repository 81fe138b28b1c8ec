// When a serial port is tried again (gateway/contract/serial.md; vectors:
// gateway/contract/vectors/serial_reopen.jsonl). Pure: each attempt's outcome in, the wait before the next out.

/** A missing path is watched at a fixed period; a path that does not open backs off on the one retry schedule,
 * counting failed opens since the port last opened; a port that opened and was then lost is tried at once. */
export class ReopenSchedule {
  /**
   * @param {(failures: number) => number} backoff seconds to wait after the n-th failure in a row (backoff.js)
   * @param {number} watchMs
   */
  constructor(backoff, watchMs) {
    this.backoff = backoff;
    this.watchMs = watchMs;
    this.failures = 0;
  }

  /**
   * Milliseconds until the next attempt after one whose outcome was 'absent' (the path does not exist), 'fails'
   * (it exists but does not open) or 'opens' (it opened; the next attempt follows its loss at once).
   * @param {'absent' | 'fails' | 'opens'} outcome
   * @returns {number}
   */
  waitMs(outcome) {
    if (outcome === 'absent') return this.watchMs;
    if (outcome === 'opens') {
      this.failures = 0;
      return 0;
    }
    if (outcome !== 'fails') throw new Error(`not an outcome: ${outcome}`);
    this.failures += 1;
    return this.backoff(this.failures) * 1000;
  }
}
