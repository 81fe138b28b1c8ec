// The project's Python: this clone's .venv (made by `make setup`), for the tests that need an operating-system
// facility Node lacks (pseudo-terminals, a Unix datagram socket). A tool only: no Node test runs the Python gateway
// or compares with it; what both gateways must do is in the contract's vectors. Found from this file's own place in
// the clone, never from a machine path.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const PYTHON = `${REPO}.venv/bin/python`;

/** A test's `skip`: false when PYTHON is there, else why not (`what`: what it would have done). Under CI=true a
 * skipped test fails the run (test-support/ci-reporter.js). */
export function noPython(what) {
  return existsSync(PYTHON) ? false : `${PYTHON} is missing (${what}): run \`make setup\``;
}
