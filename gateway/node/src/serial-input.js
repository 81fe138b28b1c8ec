// A serial port, read under credits and reopened when the device comes back: an unplugged port's path is watched
// every 100 ms and reopened the moment it is back; a port that is there but fails to open is retried with backoff.
//
// Opening: @serialport/bindings-cpp's open() calls tcflush(TCIOFLUSH) for every standard baud rate (setBaudRate
// in its serialport_unix.cpp), which throws away what the board sent while no process read the port, e.g. during
// a gateway restart. Those bytes are kept: for a standard rate the port is opened
// with open(2) and set up with `stty` (tcsetattr TCSADRAIN: no flush); a rate stty cannot name goes through the
// bindings' open(), whose termios2 path for such rates does not flush. Both give a LinuxPortBinding (the fd and
// its poller).
//
// Reading: not through the binding's read(), which retries a 0-byte read forever (bindings-cpp issue #162): a
// vanished device reads 0 bytes, so it would spin instead of being reopened. Here a read is one read(2) of the
// non-blocking fd, made only when the input holds a credit; EAGAIN waits on the binding's poller; 0 bytes means the
// device is gone. While no credit is held nothing is read: the bytes wait in the kernel.

import { execFile } from 'node:child_process';
import { closeSync, constants, existsSync, open, readSync } from 'node:fs';
import { promisify } from 'node:util';

import { LinuxBinding, LinuxPortBinding } from '@serialport/bindings-cpp';

import { contractNumber } from './contract-constants.js';
import { READ_CHUNK } from './line-handler.js';
import { ERROR_CHARS, LONG_INTERVAL_S, RateLimitedLog, event } from './logs.js';
import { ReopenSchedule } from './reopen-schedule.js';

// How often a vanished port's path is checked: reopened as soon as it is back.
const WAIT_FOR_DEVICE_MS = contractNumber('device_watch_ms');
const STTY_TIMEOUT_MS = 5000;

const openFile = promisify(open);
const run = promisify(execFile);

/** The rates termios names (B50 ... B4000000 on Linux), which `stty` sets. */
const STANDARD_BAUDS = new Set([50, 75, 110, 134, 150, 200, 300, 600, 1200, 1800, 2400, 4800, 9600, 19200,
  38400, 57600, 115200, 230400, 460800, 500000, 576000, 921600, 1000000, 1152000, 1500000, 2000000, 2500000,
  3000000, 3500000, 4000000]);

// pyserial's settings: raw bytes in, 8N1, no flow control, no echo, no character translation.
const RAW_8N1 = ['raw', '-echo', '-echoe', '-echok', '-echonl', '-echoctl', '-echoke', '-iexten', '-onlcr', '-ocrnl',
  'cs8', '-cstopb', '-parenb', '-crtscts', 'clocal', 'cread'];

// pyserial's words for a read that found the device gone.
const NO_DATA = 'device reports readiness to read but returned no data '
  + '(device disconnected or multiple access on port?)';
const WOULD_BLOCK = new Set(['EAGAIN', 'EWOULDBLOCK', 'EINTR']);

/** The device went away while open (or its reads fail): reopened once it is back. */
export class SerialLost extends Error {}

/** An open port: one read at a time, interrupt() to stop waiting, close(). */
class SerialDevice {
  constructor(port) {
    this.port = port; // a LinuxPortBinding: its fd and poller
    this.interrupted = false;
  }

  /**
   * Reads what the kernel holds (up to buffer.length), waiting for bytes if there are none. Resolves to the count,
   * or 0 once interrupt() was called; rejects with SerialLost when the device is gone.
   */
  async read(buffer) {
    let pollError = null;
    for (;;) {
      if (this.interrupted) return 0;
      let bytes;
      try {
        bytes = readSync(this.port.fd, buffer, 0, buffer.length, null); // non-blocking: returns at once
      } catch (error) {
        if (!WOULD_BLOCK.has(error.code)) throw new SerialLost(error.message);
        if (pollError !== null) throw new SerialLost(pollError.message); // an error condition and still no byte
        pollError = await this.readable();
        continue;
      }
      if (bytes === 0) throw new SerialLost(NO_DATA); // a hung-up tty reads 0 bytes: the device is gone
      return bytes;
    }
  }

  /** Resolves when the fd is readable (null) or the poller reports an error condition (that error). */
  readable() {
    return new Promise((resolve) => {
      this.port.poller.once('readable', (error) => resolve(error && !error.canceled ? error : null));
    });
  }

  /** Ends a waiting read() (it resolves to 0) and every later one. */
  interrupt() {
    this.interrupted = true;
    this.port.poller.stop(); // cancels the wait: 'readable' with a canceled error
  }

  async close() {
    try {
      await this.port.close();
    } catch {
      // the fd is gone whatever close(2) said; nothing else holds it
    }
  }
}

/**
 * Sets the port up with stty. stty opens the path itself: the caller's fd, already open, keeps the port open across
 * stty's close, so DTR does not drop (an Arduino would reset). A driver that adjusts a setting makes stty say
 * "unable to perform all requested operations": the port is set up as far as the driver allows, which pyserial
 * accepts without a word, so this does too.
 */
async function configure(path, baud) {
  try {
    await run('stty', ['-F', path, String(baud), ...RAW_8N1], {
      timeout: STTY_TIMEOUT_MS, env: { ...process.env, LC_ALL: 'C' },
    });
  } catch (error) {
    const stderr = String(error.stderr ?? '').trim();
    if (stderr.endsWith(': unable to perform all requested operations')) return;
    throw new Error(stderr || error.message);
  }
}

/** Opens path at baud, 8N1 and raw, keeping what waits in the kernel's input buffer. Rejects when it cannot. */
export async function openSerialDevice(path, baud) {
  if (!STANDARD_BAUDS.has(baud)) {
    return new SerialDevice(await LinuxBinding.open({ path, baudRate: baud, lock: false })); // termios2: no flush
  }
  const fd = await openFile(path, constants.O_RDWR | constants.O_NOCTTY | constants.O_NONBLOCK);
  try {
    await configure(path, baud);
    return new SerialDevice(new LinuxPortBinding(fd, { path, baudRate: baud }));
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

const errorText = (error) => String(error?.message ?? error).slice(0, ERROR_CHARS);
const yieldToLoop = () => new Promise((resolve) => { setImmediate(resolve); });

export class SerialInput {
  /**
   * @param {string} path the port as configured (a device node or a link to one)
   * @param {number} baud
   * @param {import('./line-handler.js').LineHandler} handler its credits are this input's (their onAvailable is
   *   set here)
   * @param {(attempts: number) => number} backoff seconds to wait after the attempts-th failed open in a row
   * @param {(up: 0 | 1) => void} setUp sets the input_up gauge of this port
   */
  constructor(path, baud, handler, backoff, setUp) {
    this.path = path;
    this.baud = baud;
    this.handler = handler;
    this.backoff = backoff;
    this.setUp = setUp;
    this.log = new RateLimitedLog({ intervalS: LONG_INTERVAL_S });
    this.buffer = Buffer.allocUnsafe(READ_CHUNK); // reused: feed() keeps no reference to it
    this.stopping = false;
    this.device = null;
    this.creditWaiter = null; // resolves the wait for a credit
    this.sleeper = null; // ends a wait for the device or a backoff early
    this.done = null;
    handler.credits.onAvailable = () => this.creditBack();
  }

  /** Starts reading (and reopening) until stop(). */
  start() {
    if (this.done === null) this.done = this.run();
  }

  /** Stops reading; resolves once the port is closed. */
  stop() {
    this.stopping = true;
    this.sleeper?.();
    this.creditBack();
    this.device?.interrupt();
    return this.done ?? Promise.resolve();
  }

  async run() {
    const schedule = new ReopenSchedule(this.backoff, WAIT_FOR_DEVICE_MS);
    while (!this.stopping) {
      if (!existsSync(this.path)) { // unplugged: watch the path, no backoff, reopen the moment it is back
        this.setUp(0);
        this.log.event('warning', 'serial_absent', { key: this.path, port: this.path,
          action: 'waiting for the device; reopened as soon as it appears' });
        await this.sleep(schedule.waitMs('absent'));
        continue;
      }
      let device;
      try {
        device = await openSerialDevice(this.path, this.baud);
      } catch (error) {
        this.setUp(0);
        this.log.event('warning', 'serial_unavailable', { key: this.path, port: this.path, error: errorText(error),
          action: 'retrying with backoff' });
        await this.sleep(schedule.waitMs('fails'));
        continue;
      }
      schedule.waitMs('opens'); // once the port is lost, it is tried again at once
      this.setUp(1);
      event('info', 'serial_open', { port: this.path, baud: this.baud });
      this.device = device;
      try {
        await this.readFrom(device);
      } catch (error) {
        if (!(error instanceof SerialLost)) throw error;
        event('warning', 'serial_lost', { port: this.path, error: errorText(error),
          action: 'reopening when the device is back' });
      } finally {
        this.setUp(0);
        this.device = null;
        await device.close();
      }
    }
  }

  async readFrom(device) {
    this.handler.restart();
    const credits = this.handler.credits;
    while (!this.stopping) {
      if (!credits.take()) { // the spool has no room, or the ingest is behind: the bytes wait in the kernel
        await new Promise((resolve) => { this.creditWaiter = resolve; });
        continue;
      }
      let bytes;
      try {
        bytes = await device.read(this.buffer);
      } catch (error) {
        credits.release();
        throw error;
      }
      if (bytes > 0 && this.handler.feed(this.buffer.subarray(0, bytes))) continue;
      credits.release();
      // Nothing handed over (noise, status lines): the credit is back at once, so without a turn of the event loop
      // a board that sends only such lines would keep the ingest and sender from running.
      if (bytes > 0) await yieldToLoop();
    }
  }

  creditBack() {
    const resolve = this.creditWaiter;
    this.creditWaiter = null;
    resolve?.();
  }

  sleep(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleeper = null;
        resolve();
      }, ms);
      this.sleeper = () => {
        clearTimeout(timer);
        this.sleeper = null;
        resolve();
      };
    });
  }
}
