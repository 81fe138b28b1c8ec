// Where lines come from: serial ports (reopened with backoff when a device goes away), or a file / stdin.

export { Credits, SERIAL_CREDITS, STREAM_CREDITS } from './credits.js';
export { LineHandler, READ_CHUNK } from './line-handler.js';
export { STANDARD_BAUDS, SerialInput, SerialLost, WAIT_FOR_DEVICE_MS, openSerialDevice } from './serial-input.js';
export { StreamInput } from './stream-input.js';
