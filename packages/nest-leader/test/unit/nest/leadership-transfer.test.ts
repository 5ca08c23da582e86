import './support.js';
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { Injectable } from '@nestjs/common';
import { InvalidLeaderElectionOptionError, LeaderOnly, LeadershipTransferError } from 'nest-leader';
import { ManualClock, MemoryLock } from 'nest-leader/testing';
import { deferred, OTHER, type Replica, SELF, startReplica } from './support.js';

@Injectable()
class Reconciler {
  readonly log: string[] = [];
  release = deferred();

  @LeaderOnly()
  async reconcile(): Promise<void> {
    this.log.push('reconcile started');
    await this.release.promise;
    this.log.push('reconcile finished');
  }
}

describe('LeaderElectionService.transferLeadership', () => {
  const replicas: Replica[] = [];
  const clocks: ManualClock[] = [];
  afterEach(async () => {
    // A stopping leader offers the Lease to an advertised replica and waits for its answer.
    const closing = Promise.all(replicas.splice(0).map((r) => r.app.close()));
    await settle(clocks.splice(0), closing);
  });

  async function twoReplicas() {
    const lock = new MemoryLock();
    const clock = new ManualClock();
    const a = await startReplica({ role: 'leader', lock, clock, providers: [Reconciler] });
    replicas.push(a);
    const b = await startReplica({ role: 'candidate', lock, clock, leader: { identity: OTHER } });
    replicas.push(b);
    return { a, b, lock, clock };
  }

  test('drains leader-only work, then the named replica leads without waiting out the Lease', async () => {
    const { a, b, lock, clock } = await twoReplicas();
    const work = a.app.get(Reconciler);
    const running = work.reconcile();
    await clock.advance(0);

    const done = a.election.transferLeadership(OTHER);
    await clock.advance(s(1));
    assert.equal(lock.read()!.record.holderIdentity, SELF, 'not handed over while work runs');
    work.log.push('finishing');
    work.release.resolve();
    await running;
    await clock.advance(0);
    await done;
    assert.equal(lock.read()!.record.holderIdentity, OTHER);

    await clock.advance(s(2)); // one retry period; the Lease is reserved for 15 s
    assert.equal(b.election.isLeader(), true);
    assert.equal(a.election.isLeader(), false);
    assert.equal(a.election.leader, OTHER);
    assert.deepEqual(work.log, ['reconcile started', 'finishing', 'reconcile finished']);
  });

  test('yieldToHigherPriority (a module option passed through): the leader drains, then a higher priority leads', async () => {
    const lock = new MemoryLock();
    const clock = new ManualClock();
    clocks.push(clock);
    const low = await startReplica({
      role: 'leader',
      lock,
      clock,
      providers: [Reconciler],
      leader: { identity: 'low', priority: 1, yieldToHigherPriority: true },
    });
    replicas.push(low);
    const work = low.app.get(Reconciler);
    const running = work.reconcile();
    await clock.advance(0);

    const high = await startReplica({
      role: 'candidate',
      lock,
      clock,
      leader: { identity: 'high', priority: 5, yieldToHigherPriority: true },
    });
    replicas.push(high);
    // low's renewal sees the advertisement and offers; high accepts at its next read; low's
    // term ends and drains.
    await clock.advance(s(5));
    assert.equal(low.election.isLeader(), false);
    assert.equal(lock.read()!.record.holderIdentity, 'low', 'not handed over while work runs');
    work.release.resolve();
    await running;
    await clock.advance(s(2));

    assert.equal(lock.read()!.record.holderIdentity, 'high');
    assert.equal(high.election.isLeader(), true);
    assert.deepEqual(work.log, ['reconcile started', 'reconcile finished']);
  });

  test('while the handed-off term drains, verifyTerm(term, { whileDraining }) still accepts it', async () => {
    const { a, clock } = await twoReplicas();
    const work = a.app.get(Reconciler);
    const term = a.election.term!;
    const running = work.reconcile();
    await clock.advance(0);

    const done = a.election.transferLeadership(OTHER);
    await clock.advance(0);
    const liveDuringDrain = term.isLive();
    const verifiedDraining = await a.election.verifyTerm(term, { whileDraining: true });
    const verifiedPlain = await a.election.verifyTerm(term);
    work.release.resolve(); // before asserting: a failed assertion must not leave the drain hanging
    assert.equal(liveDuringDrain, false);
    assert.equal(verifiedDraining, true);
    assert.equal(verifiedPlain, false);

    await running;
    await clock.advance(0);
    await done;
    assert.equal(await a.election.verifyTerm(term, { whileDraining: true }), false);
  });

  test("a bound above the election's leaseDuration is refused naming the option; the leader keeps leading", async () => {
    const { a, lock } = await twoReplicas();
    const leaseDurationSeconds = lock.read()!.record.leaseDurationSeconds;
    assert.throws(
      () =>
        a.election.transferLeadership(OTHER, { leaseDurationSeconds: leaseDurationSeconds + 1 }),
      (error: unknown) =>
        error instanceof InvalidLeaderElectionOptionError &&
        error.option === 'leaseDurationSeconds' &&
        /at most the election's leaseDurationSeconds/.test(error.message),
    );
    assert.equal(a.election.isLeader(), true);
    assert.equal(lock.read()!.record.holderIdentity, SELF);
  });

  test('a replica that does not lead cannot transfer', async () => {
    const { b } = await twoReplicas();
    assert.throws(
      () => b.election.transferLeadership(SELF),
      (error: unknown) => error instanceof LeadershipTransferError && error.reason === 'not-leader',
    );
  });
});

function s(seconds: number): number {
  return seconds * 1000;
}

/** Advances `clocks` in 100 ms steps until `pending` settles (at most 60 s), and returns it. */
async function settle<T>(clocks: ManualClock[], pending: Promise<T>): Promise<T> {
  let settled = false;
  pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 600 && !settled; i++) {
    for (const clock of clocks) await clock.advance(100);
    if (clocks.length === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return pending;
}
