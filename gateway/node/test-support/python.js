// The project's Python: this clone's .venv (made by `make setup`), for the tests that check the Node gateway against
// the Python gateway itself or need what only Python offers here (ptys, a datagram socket). Found from this file's
// own place in the clone, never from a machine path.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const PYTHON = `${REPO}.venv/bin/python`;

/** A test's `skip`: false when PYTHON is there, else why not (`what`: what it would have done). Under CI=true a
 * skipped test fails the run (test-support/ci-reporter.js). */
export function noPython(what) {
  return existsSync(PYTHON) ? false : `${PYTHON} is missing (${what}): run \`make setup\``;
}
