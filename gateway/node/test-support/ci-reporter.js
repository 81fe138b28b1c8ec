// node --test's spec reporter, and under CI=true (or 1) no silent skips: a skipped or todo test fails the run, named
// with its reason after the summary (as the root conftest.py does for pytest). Without CI it is the spec reporter.
// Use: node --test --test-reporter=./gateway/node/test-support/ci-reporter.js gateway/node/test/ (the Makefile).

import { once } from 'node:events';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spec } from 'node:test/reporters';

const CI = ['true', '1'].includes((process.env.CI ?? '').toLowerCase());

/** Why a test:pass / test:fail event's test did not really run ("skip: ..."/"todo: ..."), or null if it did. */
function notRun(data) {
  if (data.skip !== undefined && data.skip !== false) return `skip: ${data.skip === true ? '(no reason)' : data.skip}`;
  if (data.todo !== undefined && data.todo !== false) return `todo: ${data.todo === true ? '(no reason)' : data.todo}`;
  return null;
}

function where(data) {
  if (!data.file) return '';
  const file = data.file.startsWith('file:') ? fileURLToPath(data.file) : data.file;
  return ` (${relative(process.cwd(), file)}${data.line ? `:${data.line}` : ''})`;
}

/** The reporter: node:test's events in, the spec reporter's text out (its stream), then the list of tests not run. */
export default async function* ciReporter(source) {
  const notRunTests = [];
  const text = new spec(); // node:test/reporters' spec is a function returning a new Transform, not a class to extend
  (async () => {
    for await (const event of source) {
      if (CI && (event.type === 'test:pass' || event.type === 'test:fail')) {
        const why = notRun(event.data);
        if (why) notRunTests.push(`  ${event.data.name}${where(event.data)}: ${why}`);
      }
      if (!text.write(event)) await once(text, 'drain');
    }
    text.end();
  })().catch((error) => text.destroy(error));
  yield* text;
  if (notRunTests.length > 0) {
    process.exitCode = 1;
    yield [`\nCI=${process.env.CI}: ${notRunTests.length} test(s) skipped or todo, which fails the run:`,
      ...notRunTests, ''].join('\n');
  }
}
