// Scratch files for tests: each path in a folder of its own under the system's temporary folder, removed after
// every test of the file that asked for them.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'node:test';

/** A function giving a new path named name (default s.sqlite) in a new folder whose name starts with prefix. */
export function scratchPaths(prefix) {
  let folders = [];
  afterEach(() => {
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
    folders = [];
  });
  return (name = 's.sqlite') => {
    const folder = mkdtempSync(join(tmpdir(), prefix));
    folders.push(folder);
    return join(folder, name);
  };
}
