import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LeaderElectionError, LockConflictError } from 'nest-leader';
import { candidate, s, world, leaderAndFollower } from './elector.fixture.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('LeaderElector: stopping and releasing', () => {
  test('stop() ends the term, awaits onStoppedLeading, then releases the Lease', async () => {
    const w = world();
    const drain = deferred();
    const seen: string[] = [];
    const { elector } = candidate('a', w, {
      callbacks: {
        onStoppedLeading: async (term) => {
          seen.push(`drain starts, signal aborted: ${term.signal.aborted}`);
          await drain.promise;
        },
      },
    });
    elector.start();
    await w.clock.advance(s(3));

    const stopped = elector.stop().then(() => seen.push('stop resolved'));
    await w.clock.advance(0);
    assert.equal(w.lock.read()!.record.holderIdentity, 'a');
    assert.deepEqual(seen, ['drain starts, signal aborted: true']);

    drain.resolve();
    await stopped;
    const { record } = w.lock.read()!;
    assert.equal(record.holderIdentity, '');
    assert.equal(record.leaseDurationSeconds, 1);
    assert.equal(record.leaseTransitions, 0);
    assert.deepEqual(seen.at(-1), 'stop resolved');
    assert.equal(elector.isLeader(), false);
  });

  test('stop(): the Lease stays renewed while the term drains, so nobody takes over under running work', async () => {
    const w = world();
    const drain = deferred();
    const { a, b } = await leaderAndFollower(w, {
      callbacks: { onStoppedLeading: () => drain.promise },
    });

    const stopped = a.elector.stop();
    // A drain far longer than leaseDuration (15 s).
    for (let t = 0; t < 40; t++) {
      await w.clock.advance(s(1));
      assert.equal(b.elector.isLeader(), false, `b took over ${t + 1} s into a's drain`);
    }
    assert.equal(a.elector.isLeader(), false, 'the term ended when stop() began');
    const { record } = w.lock.read()!;
    assert.equal(record.holderIdentity, 'a');
    assert.ok(w.clock.wallNow().getTime() - record.renewTime!.getTime() <= s(2), 'still renewed');

    drain.resolve();
    await stopped;
    await w.clock.advance(s(1.2));
    assert.equal(b.elector.isLeader(), true);
    assert.equal(w.lock.read()!.record.leaseTransitions, 1);
    await b.elector.stop();
  });

  test('a follower takes a released Lease at its next attempt, without waiting for expiry', async () => {
    const w = world();
    const { a, b } = await leaderAndFollower(w);

    await a.elector.stop();
    await w.clock.advance(s(1));

    assert.equal(b.elector.isLeader(), true);
    assert.equal(w.lock.read()!.record.leaseTransitions, 1);
    await b.elector.stop();
  });

  test('never releases a Lease someone else holds', async () => {
    const w = world();
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 1 });
    await elector.stop();

    assert.equal(w.lock.read()!.record.holderIdentity, 'x');
    assert.equal(w.lock.writes.at(-1)!.operation, 'set');
  });

  test('never releases a Lease another process renewed under the same identity', async () => {
    const w = world();
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.set({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 1 });
    await elector.stop();

    assert.equal(w.lock.read()!.record.holderIdentity, 'a');
  });

  test('re-reads and retries the release after a conflict', async () => {
    const w = world();
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.failNext('update', new LockConflictError(w.lock.description, 'update'));
    await elector.stop();

    assert.equal(w.lock.read()!.record.holderIdentity, '');
    assert.equal(w.lock.calls.get, 3);
  });

  test('gives up releasing after a bounded number of conflicts', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.failNext('update', new LockConflictError(w.lock.description, 'update'), 100);
    await elector.stop();

    assert.equal(w.lock.read()!.record.holderIdentity, 'a');
    assert.equal(w.lock.calls.update, 3);
    assert.equal(logger.matching('warn', 'Could not release').length, 1);
  });

  test('a release whose request hangs gives up after the per-request timeout', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.hangNext('any', 100);
    let stopped = false;
    void elector.stop().then(() => (stopped = true));
    await w.clock.advance(s(5) - 1);
    assert.equal(stopped, false);
    await w.clock.advance(1);

    assert.equal(stopped, true);
    assert.equal(logger.matching('warn', 'Could not release').length, 1);
  });

  test('releaseOnStop: false leaves the Lease to expire', async () => {
    const w = world();
    const { elector, log } = candidate('a', w, { releaseOnStop: false });
    elector.start();
    await w.clock.advance(0);

    await elector.stop();

    assert.equal(w.lock.read()!.record.holderIdentity, 'a');
    assert.deepEqual(log.events, ['started 0', 'stopped 0']);
  });

  test('a follower does not write anything on stop', async () => {
    const w = world();
    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 0 });
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(s(3));

    await elector.stop();

    assert.equal(w.lock.calls.update, 0);
    assert.equal(w.lock.read()!.record.holderIdentity, 'x');
  });

  test('stop() during an acquisition request aborts it and resolves', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    w.lock.hangNext('get');
    elector.start();
    await w.clock.advance(s(1));

    await elector.stop();

    assert.deepEqual(log.events, []);
    assert.equal(w.lock.read(), undefined);
  });

  test('stop() before start() resolves and writes nothing', async () => {
    const w = world();
    const { elector } = candidate('a', w);

    await elector.stop();

    assert.deepEqual(w.lock.calls, { get: 0, create: 0, update: 0 });
  });

  test('stop() is idempotent; start() after stop() throws', async () => {
    const w = world();
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    const first = elector.stop();
    assert.equal(elector.stop(), first);
    await first;

    assert.throws(() => elector.start(), LeaderElectionError);
  });
});
