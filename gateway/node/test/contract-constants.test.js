// contract-constants.js: the contract's numbers and statements as the gateway reads them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { REJECT_REASONS, STATEMENTS, contractNumber } from '../src/contract-constants.js';

describe('contract-constants', () => {
  it('reads the four statements by name', () => {
    assert.deepEqual(Object.keys(STATEMENTS).sort(), ['day_change', 'latest', 'reading', 'source_day']);
    assert.ok(Object.values(STATEMENTS).every((text) => text.startsWith('INSERT INTO ') && !text.endsWith(';')));
  });

  it('gives numbers and refuses a name constants.json does not have', () => {
    assert.equal(typeof contractNumber('held_frames_max'), 'number');
    assert.throws(() => contractNumber('no_such_constant'), /constants.json has no no_such_constant/);
  });

  it('groups the reject reasons, frozen', () => {
    assert.deepEqual(Object.keys(REJECT_REASONS), ['decode', 'input', 'csv', 'signing']);
    assert.ok(Object.isFrozen(REJECT_REASONS.decode));
  });
});
