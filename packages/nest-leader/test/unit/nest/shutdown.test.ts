import './support.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Injectable } from '@nestjs/common';
import { currentTerm, type LeaderTerm, LeaderOnly } from 'nest-leader';
import type { ManualClock, MemoryLock } from 'nest-leader/testing';
import { acceptsThenDies } from '../core/elector.fixture.js';
import { deferred, SELF, startReplica } from './support.js';

@Injectable()
class Reconciler {
  readonly release = deferred();
  readonly seen: { holderAtFinish?: string; term?: LeaderTerm; abortedAtFinish?: boolean } = {};
  lock!: MemoryLock;
  runs = 0;

  @LeaderOnly()
  async reconcile(): Promise<string> {
    this.runs += 1;
    this.seen.term = currentTerm();
    await this.release.promise;
    this.seen.holderAtFinish = this.lock.read()?.record.holderIdentity;
    this.seen.abortedAtFinish = currentTerm()?.signal.aborted;
    return 'reconciled';
  }
}

async function leaderWithReconciler(shutdownGraceMs?: number) {
  const replica = await startReplica({
    role: 'leader',
    providers: [Reconciler],
    leader: { shutdownGraceMs },
  });
  const reconciler = replica.app.get(Reconciler);
  reconciler.lock = replica.lock;
  return { ...replica, reconciler };
}

test('shutdown waits for in-flight work, then releases the Lease', async () => {
  const { app, lock, clock, reconciler } = await leaderWithReconciler();
  const running = reconciler.reconcile();

  const closing = app.close();
  await clock.settle();
  assert.equal(lock.read()?.record.holderIdentity, SELF, 'still held while work runs');

  reconciler.release.resolve();
  assert.equal(await running, 'reconciled');
  await closing;
  assert.equal(reconciler.seen.holderAtFinish, SELF);
  assert.equal(lock.read()?.record.holderIdentity, '', 'released after the work finished');
});

test('shutdown refuses new leader-only work and aborts the term the work runs under', async () => {
  const { app, clock, reconciler } = await leaderWithReconciler();
  const running = reconciler.reconcile();

  const closing = app.close();
  await clock.settle();
  assert.equal(await reconciler.reconcile(), undefined, 'a new call is skipped');
  assert.equal(reconciler.runs, 1);

  reconciler.release.resolve();
  await running;
  await closing;
  assert.equal(reconciler.seen.term?.leaseTransitions, 0);
  assert.equal(reconciler.seen.abortedAtFinish, true);
});

test('shutdown releases the Lease after shutdownGraceMs even if work never finishes', async () => {
  const { app, lock, clock, reconciler } = await leaderWithReconciler(5_000);
  void reconciler.reconcile(); // never released

  const closing = app.close();
  await clock.advance(4_999);
  assert.equal(lock.read()?.record.holderIdentity, SELF);

  await clock.advance(1);
  await closing;
  assert.equal(lock.read()?.record.holderIdentity, '');
});

/** The leader advertises template `aaa`; a replica of the newer template `bbb` advertised itself. */
async function leaderBesideNewerReplica(leader: Record<string, unknown>) {
  const replica = await startReplica({
    role: 'leader',
    leader: { podTemplateHash: 'aaa', priority: 1, ...leader },
  });
  await replica.clock.settle();
  advertiseNewerReplica(replica.lock, replica.clock);
  return replica;
}

/** `pod-bbb`, of the newer template `bbb`, advertises itself in the record (started 60 s on). */
function advertiseNewerReplica(lock: MemoryLock, clock: ManualClock): void {
  const { record } = lock.read()!;
  const startedAt = new Date(clock.wallNow().getTime() + 60_000);
  lock.set({
    ...record,
    candidates: [
      ...record.candidates!,
      { identity: 'pod-bbb', podTemplateHash: 'bbb', priority: 0, startedAt },
    ],
  });
}

test('LeaderModule passes podTemplateHash and priority to the elector: shutdown hands the Lease to the newer replica', async () => {
  const { app, lock, clock } = await leaderBesideNewerReplica({});
  assert.deepEqual(
    lock.read()!.record.candidates!.map((c) => [c.identity, c.podTemplateHash, c.priority]),
    [
      [SELF, 'aaa', 1],
      ['pod-bbb', 'bbb', 0],
    ],
  );

  acceptsThenDies({ lock, clock }, 'pod-bbb'); // it answers the leader's offer
  let closed = false;
  const closing = app.close().then(() => (closed = true));
  while (!closed) await clock.advance(250);
  await closing;

  const { record } = lock.read()!;
  assert.equal(record.holderIdentity, 'pod-bbb');
  assert.deepEqual(record.handoff, { to: 'pod-bbb', leaseTransitions: 1, preferred: true });
});

test('a leader stopped by a rollout leads on while it waits for the new replica: its leader-only work still runs until it hands off', async () => {
  const { app, lock, clock } = await startReplica({
    role: 'leader',
    providers: [Reconciler],
    leader: { podTemplateHash: 'aaa' },
  });
  const reconciler = app.get(Reconciler);
  reconciler.lock = lock;
  reconciler.release.resolve();

  let closed = false;
  const closing = app.close().then(() => (closed = true));
  await clock.advance(2_000);
  assert.equal(closed, false, 'waiting for a replica of a newer template');
  assert.equal(await reconciler.reconcile(), 'reconciled', 'runs while it still leads');

  advertiseNewerReplica(lock, clock);
  acceptsThenDies({ lock, clock }, 'pod-bbb');
  while (!closed) await clock.advance(250);
  await closing;
  assert.equal(lock.read()!.record.holderIdentity, 'pod-bbb');
  assert.equal(await reconciler.reconcile(), undefined, 'skipped once the term ended');
  assert.equal(reconciler.runs, 1);
});

test('with handoffOnShutdown: false shutdown releases the Lease to anyone', async () => {
  const { app, lock } = await leaderBesideNewerReplica({ handoffOnShutdown: false });
  await app.close();
  assert.equal(lock.read()?.record.holderIdentity, '');
});

test('with releaseOnShutdown: false the Lease keeps naming this replica after shutdown', async () => {
  const { app, lock } = await startReplica({
    role: 'leader',
    leader: { releaseOnShutdown: false },
  });
  await app.close();
  assert.equal(lock.read()?.record.holderIdentity, SELF);
});
