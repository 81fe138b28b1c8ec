-- The gateway's spool: a SQLite database holding every accepted frame until Cassandra has acknowledged it.
-- Spool format 6. Every gateway creates a new spool by running these statements, in this order, in one
-- transaction, and opens an existing one only if its PRAGMA user_version is at most the number set below.
-- The rules around this schema (WAL, fsync, size cap, full disk, restart, upgrade from format 1) are in spool.md.

-- One row per accepted frame, oldest first by id.
CREATE TABLE IF NOT EXISTS frames (
    -- AUTOINCREMENT: ids only grow, never reused even after the table emptied, so a reader's cursor
    -- ("the rows with an id above the last one I took") never skips a frame.
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL,         -- the frame's source id
    ts_ms INTEGER NOT NULL,       -- the readings' timestamp: ms since 1970-01-01 UTC (explicit t or receipt stamp)
    received_ms INTEGER NOT NULL, -- when its line was read, ms since 1970-01-01 UTC (for the delivery latency)
    metrics TEXT NOT NULL,        -- metric names, comma-separated, in the frame's order: 'temp_in,light'
    vals BLOB NOT NULL,           -- their values, in the same order: 8 bytes each, IEEE-754 doubles, big-endian
    -- The row's checksum (spool.md, "Row checksums"): CRC-32 of source, ts_ms, received_ms, metrics and vals, as a
    -- signed 32-bit integer. NULL in a row written before checksums (format 5 or older, upgraded): not checked.
    crc INTEGER
);

-- The last receipt timestamp given to each source, committed in the same transaction as its frames: after a
-- restart new stamps continue above it, so a new frame never takes the key (source, ts) of one stamped before.
CREATE TABLE IF NOT EXISTS receipt_stamps (
    source TEXT PRIMARY KEY,
    last_ts_ms INTEGER NOT NULL
);

-- Per source, the seq of its newest frame known to be safe (committed here, or acknowledged by Cassandra) and that
-- frame's ts_ms: after a restart the source's seqs continue from it, so frames lost across the restart (a crash,
-- or lines a board sent while no gateway read) are counted as a seq gap (spool.md, "Seqs across a restart").
CREATE TABLE IF NOT EXISTS source_seqs (
    source TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    ts_ms INTEGER NOT NULL
);

-- Per source of signed frames, the highest counter accepted (signing.md), committed in the same transaction as the
-- frames it came with: a replay is refused across a restart, and a frame repeated after a crash is stored once.
-- key_fingerprint: the key the counter was accepted under (signing.md, "A counter belongs to a key"), 16 hex digits;
-- '' in a row written before fingerprints (format 4, upgraded: spool.md, "Upgrading").
CREATE TABLE IF NOT EXISTS source_counters (
    source TEXT PRIMARY KEY,
    counter INTEGER NOT NULL,
    key_fingerprint TEXT NOT NULL DEFAULT ''
);

-- The spool format version (this file's version). A gateway refuses a spool with a higher one.
PRAGMA user_version = 6;
