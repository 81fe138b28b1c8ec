// A frame's values as the spool stores them (gateway/contract/spool.md, "Rows"): the metric names as one text,
// the values as big-endian IEEE-754 doubles, which is exactly how CQL serializes a `double`. The sender slices
// them into a batch as they are, with no conversion per row. Byte for byte the contract's
// format: a spool written by either gateway is drained by the other.

export const DOUBLE_BYTES = 8;
const NAMES_KEPT = 1024; // a frame's layout (its names) is shared by thousands of frames: split once

const splitNames = new Map();

/** [['temp_in', 5.5], ['light', 0]] → {metrics: 'temp_in,light', vals: a Buffer of 16 bytes}. */
export function packValues(values) {
  if (values.length === 0) throw new RangeError('a frame has at least one value');
  const vals = Buffer.allocUnsafe(values.length * DOUBLE_BYTES);
  const names = new Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const [name, number] = values[i];
    // writeDoubleBE would turn a string into NaN: refused instead.
    if (typeof number !== 'number') throw new TypeError(`the value of ${name} is not a number: ${number}`);
    names[i] = name;
    vals.writeDoubleBE(number, i * DOUBLE_BYTES);
  }
  return { metrics: names.join(','), vals };
}

/** The names of a metrics text, in order (a frozen array, shared by every frame with that text). */
export function metricNames(metrics) {
  let names = splitNames.get(metrics);
  if (names === undefined) {
    if (splitNames.size >= NAMES_KEPT) splitNames.delete(splitNames.keys().next().value); // the oldest
    names = Object.freeze(metrics.split(','));
    splitNames.set(metrics, names);
  }
  return names;
}

/** 'temp_in,light' and their 16 bytes → [['temp_in', 5.5], ['light', 0]]. */
export function unpackValues(metrics, vals) {
  const names = metricNames(metrics);
  if (vals.length !== names.length * DOUBLE_BYTES) {
    throw new RangeError(`${names.length} metrics need ${names.length * DOUBLE_BYTES} bytes of values, `
      + `not ${vals.length}`);
  }
  return names.map((name, i) => [name, vals.readDoubleBE(i * DOUBLE_BYTES)]);
}
