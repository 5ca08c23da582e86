import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { HolderLiveness, VersionedLeaseRecord } from 'nest-leader/core';
import { ManualClock, MemoryLock } from 'nest-leader/testing';
import { candidate, s } from './elector.fixture.js';

/**
 * A MemoryLock that reports what a FileLock reports about the holder's process (the OS proof
 * itself is tested with real processes in file.lock.holder-process.test.ts).
 */
class HolderCheckingLock extends MemoryLock {
  constructor(public liveness: HolderLiveness) {
    super({ name: 'test' });
  }
  override async get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    const current = await super.get(signal);
    if (!current || current.record.holderIdentity === '') return current;
    return { ...current, holderLiveness: this.liveness };
  }
}

function held(liveness: HolderLiveness) {
  const w = { lock: new HolderCheckingLock(liveness), clock: new ManualClock() };
  w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 2 });
  return w;
}

describe('LeaderElector: a holder whose process the lock can check', () => {
  test('proven gone: taken at once with the next term, and the proof is logged', async () => {
    const w = held({ state: 'gone', proof: 'PID 123 no longer exists' });
    const { elector, log, logger } = candidate('a', w);

    elector.start();
    await w.clock.advance(0);

    assert.equal(elector.isLeader(), true);
    assert.deepEqual(log.events, ['started 3']);
    assert.equal(logger.matching('info', /"x", is gone \(PID 123 no longer exists\)/).length, 1);
    await elector.stop();
  });

  test('alive: waited for until its lease expires by our observation, as any holder', async () => {
    const w = held({ state: 'alive' });
    const { elector } = candidate('a', w);

    elector.start();
    await w.clock.advance(s(15) - 1);
    assert.equal(elector.isLeader(), false);

    await w.clock.advance(s(2));
    assert.equal(elector.isLeader(), true);
    await elector.stop();
  });

  test('unknown: waited for, with one line naming the holder, the reason and until when', async () => {
    const w = held({ state: 'unknown', reason: 'the holder runs on another host (b)' });
    const { elector, logger } = candidate('a', w);
    const until = new Date(w.clock.wallNow().getTime() + s(15)).toISOString();

    elector.start();
    await w.clock.advance(s(10)); // five more reads: still one line

    assert.equal(elector.isLeader(), false);
    const lines = logger.matching('info', 'Waiting for "x"');
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /another host \(b\)/);
    assert.ok(lines[0]!.includes(`leads until ${until}`), lines[0]);
    await elector.stop();
  });
});
