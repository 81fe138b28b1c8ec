// Bytes from a serial port (or a file) -> complete lines, with a bounded buffer (gateway/contract/README.md,
// "lines.jsonl").
//
// \n, \r\n and a lone \r each end a line: boards differ (Serial.println sends \r\n, some send \r alone). A \r\n
// split across two reads is still one ending: its \n then ends an empty line, and empty lines are not lines.
// Lines come without their ending. A board that never ends a line must not grow memory: once a partial line
// passes the limit it is counted too_long once, in that read, and dropped up to its ending. reset() (the port was
// reopened) reports a partial line thrown away.

import { MAX_LINE_BYTES } from './protocol.js';

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = Buffer.alloc(0);

export class LineAssembler {
  constructor(limit = MAX_LINE_BYTES) {
    this.limit = limit;
    this.partial = EMPTY; // an unfinished line from earlier reads, never longer than the limit
    this.discarding = false; // dropping an over-long line up to its ending
  }

  /**
   * One read (a Buffer). Returns {lines, tooLong}: the lines it completed (Buffers, never empty; they may share
   * memory with `data`) and how many over-long lines it dropped.
   */
  feed(data) {
    const lines = [];
    let tooLong = 0;
    let start = 0;
    const length = data.length;
    for (let i = 0; i < length; i++) {
      const byte = data[i];
      if (byte !== LF && byte !== CR) continue;
      if (this.discarding) {
        this.discarding = false; // this ending ends the dropped line
      } else {
        const size = this.partial.length + (i - start);
        if (size > this.limit) {
          tooLong++;
        } else if (size > 0) {
          lines.push(this.partial.length ? Buffer.concat([this.partial, data.subarray(start, i)]) : data.subarray(start, i));
        }
        this.partial = EMPTY;
      }
      if (byte === CR && data[i + 1] === LF) i++; // \r\n: one ending
      start = i + 1;
    }
    if (start < length && !this.discarding) {
      if (this.partial.length + (length - start) > this.limit) {
        this.partial = EMPTY;
        this.discarding = true;
        tooLong++;
      } else {
        // A copy: the caller may reuse its read buffer.
        this.partial = Buffer.concat([this.partial, data.subarray(start)]);
      }
    }
    return { lines, tooLong };
  }

  /** The input ended (a file, stdin): the unfinished line, if any, is a last line. */
  end() {
    return this.feed(Buffer.from([LF]));
  }

  /** Forgets a partial line (the port was reopened); returns how many were thrown away (0 or 1). An over-long
   * line being dropped was already counted by feed(). */
  reset() {
    const lost = this.partial.length ? 1 : 0;
    this.partial = EMPTY;
    this.discarding = false;
    return lost;
  }
}
