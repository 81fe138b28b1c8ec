// decode --port: a serial port's lines, decoded and judged as they come, until the port goes away, a signal,
// --count lines or --seconds (gateway/contract/process.md, "decode"). Opened as the service opens a port (its
// kernel buffer kept: serial-input.js), never written to, never reopened; nothing is written to disk.

import { reject } from './decoded.js';
import { LineAssembler } from './line-assembler.js';
import { READ_CHUNK } from './line-handler.js';
import { SerialLost, openSerialDevice } from './serial-input.js';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const LF = 0x0a;
const CR = 0x0d;

export class PortUnavailable extends Error {}

/** A read's bytes cut after each line ending (CR, LF or CRLF), the unfinished rest last. */
function pieces(data) {
  const cut = [];
  let start = 0;
  for (let i = 0; i < data.length; i++) {
    if (data[i] !== LF && data[i] !== CR) continue;
    if (data[i] === CR && data[i + 1] === LF) i++;
    cut.push(data.subarray(start, i + 1));
    start = i + 1;
  }
  if (start < data.length) cut.push(data.subarray(start));
  return cut;
}

/**
 * Reads until the end; resolves to why it ended (decode-verdicts.js ENDS). writeResults(results) prints decoded
 * lines (judged by the caller, through judge) and resolves once written. Rejects with PortUnavailable when the
 * port does not open.
 */
export async function readPort(path, baud, decode, judge, writeResults, { count, seconds } = {}) {
  let end = null;
  let device = null;
  const stopWith = (why) => {
    end ??= why;
    device?.interrupt();
  };
  const onSignal = () => stopWith('signal');
  for (const name of STOP_SIGNALS) process.on(name, onSignal); // before the open: a signal meanwhile still counts
  const timer = seconds === undefined ? null : setTimeout(() => stopWith('seconds'), seconds * 1000);
  try {
    try {
      device = await openSerialDevice(path, baud);
    } catch (error) {
      throw new PortUnavailable(error.message);
    }
    if (end !== null) device.interrupt();
    try {
      return await readFrom(device, decode, judge, writeResults, count, () => end, stopWith);
    } finally {
      await device.close();
    }
  } finally {
    clearTimeout(timer);
    for (const name of STOP_SIGNALS) process.off(name, onSignal);
  }
}

async function readFrom(device, decode, judge, writeResults, count, ended, stopWith) {
  const assembler = new LineAssembler();
  const buffer = Buffer.allocUnsafe(READ_CHUNK);
  while (ended() === null) {
    let bytes;
    try {
      bytes = await device.read(buffer);
    } catch (error) {
      if (!(error instanceof SerialLost)) throw error;
      stopWith('gone'); // a vanished device, or a pty whose other side closed
      break;
    }
    if (bytes === 0) break; // interrupted: the end is set
    let results = [];
    // A line at a time: a too_long reject keeps its place among the lines.
    for (const piece of pieces(buffer.subarray(0, bytes))) {
      const { lines, tooLong } = assembler.feed(piece);
      for (let i = 0; i < tooLong; i++) results.push(reject('too_long'));
      for (const line of lines) results.push(decode(line));
    }
    if (count !== undefined) results = results.slice(0, count - judge.counts.lines);
    await writeResults(results);
    if (count !== undefined && judge.counts.lines >= count) stopWith('count');
  }
  if (ended() !== 'count' && assembler.reset()) await writeResults([reject('partial_line')]);
  return ended();
}
