// The spool's INSERTs of frames (spool/store.js): multi-row statements of a few fixed sizes, one statement step per 128
// frames. Frames with an id (held ones, under fsync = deferred) keep it; new ones get theirs from AUTOINCREMENT.

// Rows per INSERT statement, largest first. 128 rows are 640 variables (768 with the id), within any SQLite's limit.
const INSERT_SIZES = [128, 32, 8, 1];
const insertSql = (size, withId) => `INSERT INTO frames (${withId ? 'id, ' : ''}source, ts_ms, received_ms, metrics, `
  + `vals) VALUES ${Array(size).fill(withId ? '(?, ?, ?, ?, ?, ?)' : '(?, ?, ?, ?, ?)').join(',')}`;

function insertParams(frames, start, size, withId) {
  const params = new Array(size * (withId ? 6 : 5));
  let p = 0;
  for (let i = start; i < start + size; i++) {
    const frame = frames[i];
    if (withId) params[p++] = frame.id;
    params[p++] = frame.source;
    params[p++] = frame.ts_ms;
    params[p++] = frame.received_ms;
    params[p++] = frame.metrics;
    params[p++] = frame.vals;
  }
  return params;
}

export class FrameInserts {
  /** db: the spool's writer connection. */
  constructor(db) {
    this.plain = new Map(INSERT_SIZES.map((size) => [size, db.prepare(insertSql(size, false))]));
    this.withId = new Map(INSERT_SIZES.map((size) => [size, db.prepare(insertSql(size, true))]));
  }

  /** Inserts frames (inside the caller's transaction), in their order. */
  run(frames) {
    const withId = frames[0].id !== undefined;
    const inserts = withId ? this.withId : this.plain;
    let start = 0;
    for (const size of INSERT_SIZES) {
      const insert = inserts.get(size);
      for (; frames.length - start >= size; start += size) insert.run(insertParams(frames, start, size, withId));
    }
  }
}
