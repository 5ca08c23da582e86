import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LockConflictError, type ResourceLock } from 'nest-leader';
import type {
  LeaseRecord,
  LockOperation,
  LockRequestOutcome,
  VersionedLeaseRecord,
} from 'nest-leader/core';
import { LockRequests } from '../../../dist/esm/core/election/lock-requests.js';
import { ManualClock, MemoryLock } from 'nest-leader/testing';

const TIMEOUT_MS = 5_000;

function requests(lock: ResourceLock, clock = new ManualClock()) {
  const heard: string[] = [];
  const calls = new LockRequests(lock, clock, TIMEOUT_MS, {
    succeeded: (operation: LockOperation) => heard.push(`ok ${operation}`),
    finished: (operation: LockOperation, outcome: LockRequestOutcome, durationMs: number) =>
      heard.push(`${operation} ${outcome} ${durationMs}`),
  });
  return { calls, heard, clock };
}

const record: LeaseRecord = {
  holderIdentity: 'a',
  leaseDurationSeconds: 15,
  leaseTransitions: 0,
};

/** A lock whose requests never answer and ignore their signal. */
const hangingLock: ResourceLock = {
  description: 'hanging lock',
  get: () => new Promise<VersionedLeaseRecord | undefined>(() => undefined),
  create: () => new Promise<string>(() => undefined),
  update: () => new Promise<string>(() => undefined),
};

const running = (): AbortSignal => new AbortController().signal;

describe('LockRequests', () => {
  test('a get of a missing record answers undefined, reported as not-found', async () => {
    const { calls, heard } = requests(new MemoryLock());

    assert.equal(await calls.get(running()), undefined);

    assert.deepEqual(heard, ['ok get', 'get not-found 0']);
  });

  test('create and update pass through and are reported as successes', async () => {
    const { calls, heard } = requests(new MemoryLock());

    const version = await calls.create(record, running());
    await calls.update({ ...record, leaseTransitions: 1 }, version, running());

    assert.deepEqual(heard, ['ok create', 'create success 0', 'ok update', 'update success 0']);
  });

  test('a failure is rethrown unchanged and reported with its outcome', async () => {
    const { calls, heard } = requests(new MemoryLock());

    await assert.rejects(calls.update(record, 'no-such-version', running()), LockConflictError);

    assert.deepEqual(heard, ['update conflict 0']);
  });

  test('a request that hangs and ignores its signal is given up after the timeout', async () => {
    const { calls, heard, clock } = requests(hangingLock);
    const pending = calls.get(running());
    const settled = assert.rejects(pending, { name: 'TimeoutError' });

    await clock.advance(TIMEOUT_MS);
    await settled;

    assert.deepEqual(heard, [`get timeout ${TIMEOUT_MS}`]);
  });

  test('a request whose caller stops is given up at once, reported as aborted', async () => {
    const { calls, heard, clock } = requests(hangingLock);
    const caller = new AbortController();
    const settled = assert.rejects(calls.get(caller.signal));

    await clock.advance(1_000);
    caller.abort();
    await settled;

    assert.deepEqual(heard, ['get aborted 1000']);
    assert.equal(clock.pendingTimers, 0, 'the timeout timer is disposed');
  });
});
