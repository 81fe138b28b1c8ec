// A connection's head clock (gateway/contract/status.md, "The listener", Time), pure: a request's head must be
// complete within the limit of the connection opening (its first request) or of the head's first byte (a later
// one); a connection with no byte of a next request for the limit after its answers is closed without one.
// status-server.js keeps one per connection and ticks it, so the limit holds whatever Node's own checks do.

/** A new connection: its first head is due `limitMs` after `at`; `read` is its bytes read so far. */
export const opened = (at, read) => ({ phase: 'head', since: at, read, pending: 0 });

/** A request's head was parsed: the clock stops until its answer (and every other pending one) is done. */
export const headParsed = (clock) => ({ ...clock, phase: 'busy', pending: clock.pending + 1 });

/** An answer is done at `at`: with none left pending, the connection waits idle from then. */
export function answered(clock, at, read) {
  const pending = Math.max(0, clock.pending - 1);
  if (pending > 0 || clock.phase !== 'busy') return { ...clock, pending };
  return { phase: 'idle', since: at, read, pending };
}

/**
 * The clock at `at` with `read` bytes read: [next clock, action]; action null, 'refuse' (the head is late: 408
 * and close) or 'close' (idle: close without an answer). A byte seen while idle starts the head's clock at `at`,
 * never earlier than the byte came, so a connection is never cut short.
 */
export function tick(clock, at, read, limitMs) {
  if (clock.phase === 'busy') return [clock, null];
  if (clock.phase === 'idle' && read > clock.read) return [{ ...clock, phase: 'head', since: at, read }, null];
  if (at - clock.since < limitMs) return [clock, null];
  return [clock, clock.phase === 'head' ? 'refuse' : 'close'];
}
