// The "batch" fsync policy without blocking the event loop: SQLite commits with synchronous=NORMAL (the WAL is
// written, not fsynced) and the WAL file is then fsynced in libuv's thread pool. A commit's frames count as spooled
// (their reads' credits go back) only once an fsync started after the commit has finished: the same promise as
// synchronous=FULL, while the loop goes on reading and sending. Committed frames are in the operating system's
// hands at once, so a killed process loses none of them; only a power cut waits for the fsync.

import { closeSync, fsync, openSync } from 'node:fs';

export class WalSync {
  /** walPath: the spool's `-wal` file (fsync works on the file, whichever descriptor wrote it). */
  constructor(walPath) {
    this.walPath = walPath;
    this.fd = null;
    this.running = false;
    this.waiting = []; // {resolve, reject} of calls made since the running fsync started
  }

  /** Resolves once every commit made before this call is on the disk; rejects if that fsync failed. */
  whenDurable() {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.running) this.start();
    });
  }

  start() {
    const callers = this.waiting;
    this.waiting = [];
    try {
      this.fd ??= openSync(this.walPath, 'r');
    } catch (error) {
      for (const caller of callers) caller.reject(error);
      return;
    }
    this.running = true;
    fsync(this.fd, (error) => {
      this.running = false;
      for (const caller of callers) {
        if (error) caller.reject(error);
        else caller.resolve();
      }
      if (this.waiting.length) this.start();
    });
  }

  /** Call once no fsync is running (after whenDurable() resolved): the spool deletes the WAL when it closes. */
  close() {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
