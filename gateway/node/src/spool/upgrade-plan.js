// Which steps bring a spool file to this gateway's format (gateway/contract/spool.md, "Upgrading"; vectors:
// gateway/contract/vectors/spool_upgrade.jsonl). Pure: it looks only at what the file says of itself, its
// user_version and the columns of its tables. The steps run in this order, all in one transaction.

const TABLES = ['frames', 'receipt_stamps', 'source_seqs', 'source_counters'];

/**
 * The steps for a file of this user_version whose tables have these columns; [] when it is already in the current
 * format (nothing is written), null for a newer format (refused).
 * @param {number} version the file's user_version
 * @param {Map<string, string[]>} columns each table → its column names
 * @param {number} current this gateway's format
 * @returns {string[] | null}
 */
export function upgradeSteps(version, columns, current) {
  if (version > current) return null;
  const frames = columns.get('frames');
  const counters = columns.get('source_counters');
  const format1 = frames !== undefined && !frames.includes('metrics'); // values as JSON text
  const steps = format1 ? ['frames_format1_aside'] : [];
  if (counters !== undefined && !counters.includes('key_fingerprint')) steps.push('add_key_fingerprint'); // format 4
  if (frames !== undefined && !format1 && !frames.includes('crc')) steps.push('add_crc'); // format 5 or older
  if (steps.length > 0 || version < current || !TABLES.every((table) => columns.has(table))) {
    steps.push('schema'); // spool.sql: the tables not there yet, and user_version, last but for the copy
  }
  if (format1) steps.push('format1_rows_copied');
  return steps;
}
