// What a decoder returns: exactly one of a frame, a status or a reject (PROTOCOL.md section 3). Plain objects
// shaped like the vectors' `expect`, so a driver compares them as they are.

/** format: "v1", "legacy" or "csv"; seq and t: a number or null; values: [[metric, number], ...] in line order. */
export function frame(format, source, seq, t, values) {
  return { kind: 'frame', format, source, seq, t, values };
}

/** A T2 line's frame: counter, and the signed bytes and tag as uppercase hex, until the verifier accepts it. */
export function signedFrame({ source, seq, values, counter, signed, tag }) {
  return { kind: 'frame', format: 'signed', source, seq, t: null, values, counter, signed, tag };
}

export function status(text) {
  return { kind: 'status', text };
}

const REJECTS = new Map();
/** Rejects are shared, one per reason: most noise costs no allocation. */
export function reject(reason) {
  let decoded = REJECTS.get(reason);
  if (decoded === undefined) {
    decoded = Object.freeze({ kind: 'reject', reason });
    REJECTS.set(reason, decoded);
  }
  return decoded;
}
