// The log rate limit of gateway/contract/logs.md, "Rate limiting", as a rule on events and time alone (vectors:
// gateway/contract/vectors/log_rate_limit.jsonl). Pure: the caller gives the time, on a clock that never goes back.
//
// Per event, each key remembers when its last line was written and how many were held back since. Keys are kept in
// the order of their last line (a Map keeps insertion order: a key written again is deleted and set), so the oldest
// one is found without a scan of the table.

/** At most one line per (event, key) per interval; at most maxKeys keys remembered per event, the others sharing
 * the event's key `*`. */
export class RateLimit {
  /**
   * @param {number} interval in the unit of the times given to admit()
   * @param {number} maxKeys
   */
  constructor(interval, maxKeys) {
    this.interval = interval;
    this.maxKeys = maxKeys;
    this.keys = new Map(); // event → Map(key → {last, held}), oldest last line first
    this.shared = new Map(); // event → its `*` key's {last, held}
  }

  /**
   * null: the line is held back (and counted). Else it is written, with suppressed=N when N > 0 (N returned: the
   * lines of this event and key held back since its last line).
   * @param {number} now
   * @param {string} event
   * @param {string} [key] '' for an event with one key
   * @returns {number | null}
   */
  admit(now, event, key = '') {
    let keys = this.keys.get(event);
    if (keys === undefined) this.keys.set(event, keys = new Map());
    let slot = keys.get(key);
    let own = true;
    if (slot === undefined) {
      if (keys.size >= this.maxKeys) {
        const [oldest, { last }] = keys.entries().next().value;
        if (now - last >= this.interval) keys.delete(oldest); // its interval is over: forgotten, with its count
      }
      if (keys.size >= this.maxKeys) {
        own = false;
        slot = this.shared.get(event);
        if (slot === undefined) this.shared.set(event, slot = { last: null, held: 0 });
      } else {
        slot = { last: null, held: 0 };
      }
    }
    if (slot.last !== null && now - slot.last < this.interval) {
      slot.held += 1;
      return null;
    }
    const { held } = slot;
    slot.last = now;
    slot.held = 0;
    if (own) {
      keys.delete(key);
      keys.set(key, slot); // to the end: the newest last line
    }
    return held;
  }

  /** Keys of this event remembered (its `*` key not counted). */
  remembered(event) {
    return this.keys.get(event)?.size ?? 0;
  }
}
