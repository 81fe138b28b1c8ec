// The clean-stop marker (gateway/contract/spool.md, "A clean stop"): an empty file `<path>.clean-stop` that a clean
// stop leaves once the spool is closed, and the next start takes away before anything is written.
//
// SQLite removes the `-wal` file at a clean close, so a `-wal` file found at open means a crash; but a close whose
// checkpoint found no room (a full disk) leaves its WAL too, with every frame in it. The marker tells the two apart.
// An empty file takes no data block, so it can be made on a full disk; it and its folder are fsynced, so a power
// cut after the stop keeps it, and taking it away is fsynced too, so a crash later in the run is never taken for a
// clean stop.

import { closeSync, constants, fsyncSync, openSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';

const marker = (path) => `${path}.clean-stop`;

function syncFolder(folder) {
  const fd = openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Whether the last run stopped cleanly (its marker is there); the marker is removed, durably. */
export function takeCleanStop(path) {
  try {
    unlinkSync(marker(path));
  } catch (error) {
    if (error.code === 'ENOENT') return false;
    throw error;
  }
  syncFolder(dirname(path));
  return true;
}

/** After the spool is closed at a clean stop; false if even an empty file did not fit (no inode left). */
export function leaveCleanStop(path) {
  try {
    const fd = openSync(marker(path), constants.O_WRONLY | constants.O_CREAT, 0o600);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    syncFolder(dirname(path));
  } catch {
    return false;
  }
  return true;
}
