// The gateway's version (package.json) and implementation name (gateway/contract/process.md, --version).

import { readFileSync } from 'node:fs';

export const IMPLEMENTATION = 'node';
export const VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

export function versionLine() {
  return `telemetry-gateway ${VERSION} (${IMPLEMENTATION})`;
}
