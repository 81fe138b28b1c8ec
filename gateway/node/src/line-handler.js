// One input's bytes → lines → decoded. Each read's frames go to the
// ingest together, with the credits the read was made under; the ingest releases one of them once it has committed
// those frames.

import { Credits, SERIAL_CREDITS } from './credits.js';
import { decodeLine } from './frame-decoder.js';
import { LineAssembler } from './line-assembler.js';
import { LINE_SHOWN_BYTES, RateLimitedLog } from './logs.js';

/** Bytes asked for by one read: a read's frames travel together to the ingest, so this bounds one hand-over. */
export const READ_CHUNK = 16384;

export class LineHandler {
  /**
   * @param {string} name the input's name: a port's path as configured, a file, '-' for stdin
   * @param {{put(received: {frames: object[], receivedMs: number, credits: Credits}): void}} ingest
   * @param {object} metrics from createMetrics(): lines_read, status_lines, rejects are used
   * @param {Credits | number} [credits] the reads this input may have in memory (a count makes new Credits)
   * @param {(line: Buffer) => object} [decode] a line's decoder: decodeLine, or a CSV port's (room-csv.js
   *   lineDecoder(port))
   * @param {boolean} [trusted] a port marked trusted (signing.md, "Trusted inputs")
   */
  constructor(name, ingest, metrics, credits = SERIAL_CREDITS, decode = decodeLine, trusted = false) {
    this.name = name;
    this.trusted = trusted; // a port marked trusted (signing.md): its frames say so to the verifier
    this.ingest = ingest;
    this.metrics = metrics;
    this.credits = typeof credits === 'number' ? new Credits(credits) : credits;
    this.decode = decode;
    this.log = new RateLimitedLog();
    this.labels = { input: name };
    this.assembler = new LineAssembler();
  }

  /**
   * One read's bytes, read under one of this.credits. True: its frames went to the ingest, which gives the credit
   * back once they are spooled; false: the caller gives it back. Keeps no reference to `data` once it returns
   * (the assembler copies a partial line; frames hold strings and numbers): the caller may reuse its buffer.
   * @param {Buffer} data
   * @returns {boolean}
   */
  feed(data) {
    const receivedMs = Date.now(); // every line of a read arrived by the time the read returned
    const { lines, tooLong } = this.assembler.feed(data);
    if (tooLong) {
      this.metrics.lines_read.inc(this.labels, tooLong);
      this.reject('too_long', tooLong);
    }
    return this.handle(lines, receivedMs);
  }

  /** The input was reopened: a partial line from before belongs to no frame (counted, not silently lost). */
  restart() {
    const lost = this.assembler.reset();
    if (lost) {
      this.metrics.lines_read.inc(this.labels, lost);
      this.reject('partial_line', lost);
    }
  }

  /** End of input: a last line without its newline still counts. */
  finish() {
    const { lines } = this.assembler.end(); // a partial line is within the limit: nothing is dropped here
    // Already in memory and no read follows: handed over without waiting for a credit (the ingest may hold them
    // back while the spool has no room); the one it gives back is never used.
    this.handle(lines, Date.now());
  }

  /** Decodes; hands the frames to the ingest with the read's credits. False: nothing handed over (the caller
   * keeps the credit). */
  handle(lines, receivedMs) {
    if (lines.length === 0) return false;
    this.metrics.lines_read.inc(this.labels, lines.length);
    const frames = [];
    for (const line of lines) {
      const result = this.decode(line);
      if (result.kind === 'frame') {
        frames.push(result);
      } else if (result.kind === 'status') {
        this.metrics.status_lines.inc(this.labels);
        this.log.event('info', 'status_line', { key: this.name, input: this.name, text: result.text });
      } else {
        this.reject(result.reason, 1, line);
      }
    }
    if (frames.length === 0) return false;
    // One hand-over per read, not per frame. The ingest's queue is unbounded: the credits bound it, and a read is
    // never held back (or dropped) once made.
    this.ingest.put({ frames, receivedMs, credits: this.credits, trusted: this.trusted });
    return true;
  }

  reject(reason, count, line = null) {
    this.metrics.rejects.inc({ reason }, count);
    // latin1: one character per byte, so the log escapes each control or non-ASCII byte as itself (\x1b, \xff)
    const shown = line === null ? '' : line.toString('latin1', 0, Math.min(LINE_SHOWN_BYTES, line.length));
    this.log.event('warning', 'line_rejected', { key: `${this.name}/${reason}`, input: this.name, reason,
      line: shown });
  }
}
