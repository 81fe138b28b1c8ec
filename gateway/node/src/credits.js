// Reads an input may hold in memory, not yet spooled: a read needs a credit, and the ingest gives it back once the
// read's frames are committed. A serial port's bytes are safe in the kernel until read, so a crash loses at most
// these reads (one being committed, one waiting: a few ms of input); while the spool has no room the credits are
// held back and reading pauses with nothing in memory. A file can be replayed: it may read further ahead.

import { contractNumber } from './contract-constants.js';

export const SERIAL_CREDITS = contractNumber('serial_read_credits');
export const STREAM_CREDITS = contractNumber('stream_read_credits');

/** A counter of reads allowed; the reader that holds them is woken by onAvailable when one comes back. */
export class Credits {
  /**
   * @param {number} count credits at the start
   * @param {(() => void) | null} [onAvailable] called when release() brings the count from 0 to 1; an input sets
   *   it (handler.credits.onAvailable) when whoever built the credits could not know the input yet
   */
  constructor(count, onAvailable = null) {
    this.count = count;
    this.onAvailable = onAvailable;
  }

  /** Takes a credit for one read; false (nothing taken) when none is left. */
  take() {
    if (this.count === 0) return false;
    this.count -= 1;
    return true;
  }

  /** Gives one back: by the ingest once a read's frames are committed, or by the reader when a read handed
   * nothing over. Like a semaphore, never capped: finish() hands lines over without a credit and gets one back. */
  release() {
    this.count += 1;
    if (this.count === 1 && this.onAvailable !== null) this.onAvailable();
  }

  get available() {
    return this.count;
  }
}
