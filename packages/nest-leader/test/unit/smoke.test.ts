import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LeaderElectionError } from 'nest-leader';

test('errors are instances of LeaderElectionError', () => {
  assert.ok(new LeaderElectionError('x') instanceof Error);
});
