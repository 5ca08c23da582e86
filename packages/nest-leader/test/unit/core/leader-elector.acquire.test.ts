import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { candidate, s, world, leaderAndFollower } from './elector.fixture.js';

describe('LeaderElector: acquiring', () => {
  test('creates a missing Lease and leads at once', async () => {
    const w = world();
    const { elector } = candidate('a', w);

    elector.start();
    await w.clock.advance(0);

    assert.equal(elector.isLeader(), true);
    const { record } = w.lock.read()!;
    assert.equal(record.holderIdentity, 'a');
    assert.equal(record.leaseDurationSeconds, 15);
    assert.equal(record.leaseTransitions, 0);
    assert.deepEqual(record.acquireTime, w.clock.wallNow());
    assert.deepEqual(record.renewTime, w.clock.wallNow());
    await elector.stop();
  });

  test('takes a free Lease (empty holder) at once and increments leaseTransitions', async () => {
    const w = world();
    w.lock.set({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 4 });
    const { elector, log } = candidate('a', w);

    elector.start();
    await w.clock.advance(0);

    assert.equal(elector.isLeader(), true);
    assert.equal(w.lock.read()!.record.leaseTransitions, 5);
    assert.deepEqual(log.events, ['started 5']);
    await elector.stop();
  });

  test("waits while another holder's Lease is unexpired, then takes it over", async () => {
    const w = world();
    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 2 });
    const { elector } = candidate('a', w);

    elector.start();
    await w.clock.advance(s(15) - 1);
    assert.equal(elector.isLeader(), false);
    assert.equal(elector.leader, 'x');

    await w.clock.advance(s(2));
    assert.equal(elector.isLeader(), true);
    assert.equal(elector.leader, 'a');
    const { record } = w.lock.read()!;
    assert.equal(record.holderIdentity, 'a');
    assert.equal(record.leaseTransitions, 3);
    assert.equal(record.leaseDurationSeconds, 15);
    await elector.stop();
  });

  test('never takes over a holder that keeps renewing', async () => {
    const w = world();
    const holder = { holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 0 };
    w.lock.set(holder);
    const { elector } = candidate('a', w);
    elector.start();

    for (let i = 0; i < 30; i++) {
      await w.clock.advance(s(2));
      w.lock.set({ ...holder, renewTime: w.clock.wallNow() });
    }

    assert.equal(elector.isLeader(), false);
    assert.equal(w.lock.read()!.record.holderIdentity, 'x');
    await elector.stop();
  });

  test("measures expiry with the record's leaseDurationSeconds, not its own", async () => {
    const w = world();
    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 30, leaseTransitions: 0 });
    const { elector } = candidate('a', w);

    elector.start();
    await w.clock.advance(s(29));
    assert.equal(elector.isLeader(), false);
    await w.clock.advance(s(2));
    assert.equal(elector.isLeader(), true);
    await elector.stop();
  });

  test('retries every retryPeriod × (1 + 0.2 × random) while the holder is live', async () => {
    const w = world();
    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 0 });
    const { elector } = candidate('a', w, { random: () => 0.5 });

    elector.start();
    await w.clock.advance(s(2.2) - 1);
    assert.equal(w.lock.calls.get, 1);
    await w.clock.advance(1);
    assert.equal(w.lock.calls.get, 2);
    await w.clock.advance(s(2.2));
    assert.equal(w.lock.calls.get, 3);
    await elector.stop();
  });

  test('two candidates racing for a missing Lease: exactly one wins', async () => {
    const w = world();
    const a = candidate('a', w);
    const b = candidate('b', w);

    a.elector.start();
    b.elector.start();
    for (let i = 0; i < 30; i++) {
      await w.clock.advance(s(1));
      assert.equal(Number(a.elector.isLeader()) + Number(b.elector.isLeader()), 1);
    }

    const holders = new Set(w.lock.writes.map((write) => write.record.holderIdentity));
    assert.equal(holders.size, 1);
    await a.elector.stop();
    await b.elector.stop();
  });

  test('two candidates racing for a free Lease: exactly one wins, one transition', async () => {
    const w = world();
    w.lock.set({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 7 });
    const a = candidate('a', w);
    const b = candidate('b', w);

    a.elector.start();
    b.elector.start();
    await w.clock.advance(s(10));

    assert.equal(Number(a.elector.isLeader()) + Number(b.elector.isLeader()), 1);
    assert.equal(w.lock.read()!.record.leaseTransitions, 8);
    assert.equal([...a.log.events, ...b.log.events].length, 1);
    await a.elector.stop();
    await b.elector.stop();
  });

  test('leaseTransitions counts every change of holder', async () => {
    const w = world();
    const { a, b } = await leaderAndFollower(w);

    await a.elector.stop();
    await w.clock.advance(s(3));
    assert.equal(b.elector.isLeader(), true);
    await b.elector.stop();

    const taken = w.lock.writes.filter((write) => write.record.holderIdentity !== '');
    const transitions = [...new Set(taken.map((write) => write.record.leaseTransitions))];
    assert.deepEqual(transitions, [0, 1]);
    assert.equal(w.lock.read()!.record.leaseTransitions, 1);
  });

  test('a restarted process with the same identity waits out its old Lease (it cannot tell it from a namesake)', async () => {
    const w = world();
    w.lock.set({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      leaseTransitions: 3,
      renewTime: w.clock.wallNow(),
    });
    const { elector, log, logger } = candidate('a', w);

    elector.start();
    await w.clock.advance(s(14));
    assert.equal(elector.isLeader(), false, 'a Lease it did not write is not its own');
    assert.deepEqual(log.events, []);

    await w.clock.advance(s(2));
    assert.equal(elector.isLeader(), true);
    assert.deepEqual(log.events, ['started 4']);
    assert.deepEqual(logger.matching('warn', 'same identity'), [], 'nobody renewed it: no warning');
    await elector.stop();
  });

  test('start() returns at once and is idempotent while running', async () => {
    const w = world();
    const { elector } = candidate('a', w);

    elector.start();
    elector.start();
    assert.equal(elector.isLeader(), false);
    await w.clock.advance(0);

    assert.equal(w.lock.calls.create, 1);
    await elector.stop();
  });
});
