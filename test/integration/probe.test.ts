import { test } from 'node:test';
import assert from 'node:assert/strict';
test('env from global setup reaches test files', () => {
  assert.equal(process.env.NEST_LEADER_PROBE, 'set-in-global-setup');
});
