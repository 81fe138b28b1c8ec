// A file or stdin ('-'), read to its end, for replays and benchmarks. Read under credits like a serial port, with
// more of them (STREAM_CREDITS): a file can be replayed, so it may read further ahead. The stream is paused while
// no credit is left and resumed when one comes back.

import { createReadStream } from 'node:fs';

import { READ_CHUNK } from './line-handler.js';
import { event } from './logs.js';

export class StreamInput {
  /**
   * @param {string} path a file, or '-' for stdin
   * @param {import('./line-handler.js').LineHandler} handler its credits are this input's (their onAvailable is
   *   set here)
   * @param {() => void} [onEnd] called once the input has ended and its last lines were handed over
   */
  constructor(path, handler, onEnd = () => {}) {
    this.path = path;
    this.handler = handler;
    this.onEnd = onEnd;
    this.stream = null;
    this.opened = path === '-';
    this.ended = false;
  }

  start() {
    if (this.stream !== null) return;
    // stdin as the process's own stream: a pipe or terminal is read without blocking a worker thread, which
    // would keep the process from exiting after a stop while the writer stays silent.
    const stream = this.path === '-' ? process.stdin : createReadStream(this.path, { highWaterMark: READ_CHUNK });
    this.stream = stream;
    this.handler.credits.onAvailable = () => {
      if (!this.ended) stream.resume();
    };
    stream.on('open', () => { this.opened = true; });
    stream.on('data', (chunk) => this.read(chunk));
    stream.on('end', () => this.end(true));
    stream.on('error', (error) => this.fail(error));
  }

  /** Stops reading: what was read so far counts, a last partial line too (as at the end). */
  stop() {
    if (this.stream !== null && !this.ended) {
      this.stream.destroy();
      this.end(true);
    }
    return Promise.resolve();
  }

  /** What one read gave, fed READ_CHUNK bytes at most at a time, each piece under one credit. */
  read(chunk) {
    const credits = this.handler.credits;
    for (let at = 0; at < chunk.length; at += READ_CHUNK) {
      if (!credits.take()) { // the rest waits for a credit: the stream is paused until one comes back
        this.stream.pause();
        this.stream.unshift(chunk.subarray(at));
        return;
      }
      if (!this.handler.feed(chunk.subarray(at, at + READ_CHUNK))) credits.release();
    }
    if (credits.available === 0) this.stream.pause(); // resumed by onAvailable once the ingest gives one back
  }

  end(finish) {
    if (this.ended) return;
    this.ended = true;
    if (finish) this.handler.finish();
    event('info', 'input_ended', { input: this.path });
    this.onEnd();
  }

  /** A failed read: the error on stderr; a failed read still ends the input (input_ended,
   * onEnd), a file that never opened does not. */
  fail(error) {
    if (this.ended) return;
    process.stderr.write(`Exception in thread input ${this.path}:\n${error.stack ?? error}\n`);
    if (this.opened) {
      this.end(false);
    } else {
      this.ended = true;
    }
  }
}
