import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidLeaderElectionOptionError } from 'nest-leader';
import {
  type Candidacy,
  type CandidacyListener,
  LeaderElector,
  type LeaseRecord,
} from 'nest-leader/core';
import { candidate, leaderAndFollower, s, world } from './elector.fixture.js';

type World = ReturnType<typeof world>;

const STRATEGY = 'OldestEmulationVersion';

/** A candidacy that records when it was registered and withdrawn (and how many lock writes preceded). */
class RecordingCandidacy implements Candidacy {
  readonly description: string;
  readonly events: string[] = [];

  constructor(
    readonly identity: string,
    private readonly w: World,
  ) {
    this.description = `LeaseCandidate default/${identity}`;
  }

  run(signal: AbortSignal, listener?: CandidacyListener): Promise<void> {
    this.events.push('registered');
    listener?.onRegistered?.();
    return new Promise((resolve) => {
      signal.addEventListener(
        'abort',
        () => {
          this.events.push(`withdrawn after ${this.w.lock.writes.length} writes`);
          resolve();
        },
        { once: true },
      );
    });
  }
}

/** A candidate in coordinated mode (its own recording candidacy). */
function coordinatedCandidate(identity: string, w: World) {
  const candidacy = new RecordingCandidacy(identity, w);
  return { ...candidate(identity, w, { coordinated: candidacy }), candidacy };
}

/**
 * What Kubernetes' election controller writes to name `holder`: holder, renewTime now,
 * leaseDurationSeconds 5, strategy; no acquireTime, no preferredHolder; leaseTransitions as
 * they were.
 */
function controllerNames(w: World, holder: string): void {
  const previous = w.lock.read()?.record;
  w.lock.set({
    holderIdentity: holder,
    leaseDurationSeconds: 5,
    renewTime: w.clock.wallNow(),
    leaseTransitions: previous?.leaseTransitions ?? 0,
    strategy: STRATEGY,
  });
}

/** Coordinated candidates `a` and `b`, started, and the controller naming `a`. */
function startedWithANamed(w: World) {
  const a = coordinatedCandidate('a', w);
  const b = coordinatedCandidate('b', w);
  a.elector.start();
  b.elector.start();
  controllerNames(w, 'a');
  return { a, b };
}

/** A started coordinated candidate `a` beside a Lease its last holder released. */
function coordinatedBesideReleasedLease(w: World, leaseTransitions: number) {
  w.lock.set({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions });
  const a = coordinatedCandidate('a', w);
  a.elector.start();
  return a;
}

/** A foreign writer (the controller, kubectl) sets fields of the Lease as it is. */
function patch(w: World, fields: Partial<LeaseRecord>): void {
  w.lock.set({ ...w.lock.read()!.record, ...fields });
}

describe('LeaderElector: spec.preferredHolder', () => {
  test('a leader whose Lease names another preferredHolder drains, then hands the Lease to it; the preferred candidate leads next', async () => {
    const w = world();
    const { a, b } = await leaderAndFollower(w);

    patch(w, { strategy: STRATEGY, preferredHolder: 'b' });
    await w.clock.advance(s(2)); // a's next renewal reads it and hands over

    assert.equal(a.elector.isLeader(), false);
    assert.deepEqual(a.log.events, ['started 0', 'stopped 0']);
    const handed = w.lock.read()!.record;
    assert.equal(handed.holderIdentity, 'b');
    assert.equal(handed.preferredHolder, undefined, 'fulfilled: cleared');
    assert.equal(handed.strategy, STRATEGY, 'strategy kept');
    await w.clock.advance(s(2));
    assert.equal(b.elector.isLeader(), true);
    assert.deepEqual(b.log.events, ['started 1']);
    await Promise.all([a.elector.stop(), b.elector.stop()]);
  });

  test('a preferredHolder naming the leader itself asks nothing: it keeps renewing and keeps the field', async () => {
    const w = world();
    const a = candidate('a', w);
    a.elector.start();
    await w.clock.advance(0);

    patch(w, { strategy: STRATEGY, preferredHolder: 'a' });
    await w.clock.advance(s(10));

    assert.equal(a.elector.isLeader(), true);
    const record = w.lock.read()!.record;
    assert.equal(record.holderIdentity, 'a');
    assert.equal(record.preferredHolder, 'a');
    assert.equal(record.strategy, STRATEGY);
    assert.ok(w.clock.wallNow().getTime() - record.renewTime!.getTime() <= s(2), 'renewed');
    await a.elector.stop();
  });

  test('a preferredHolder that never takes the Lease: after the handoff bound any candidate may', async () => {
    const w = world();
    const { a, b } = await leaderAndFollower(w);

    patch(w, { strategy: STRATEGY, preferredHolder: 'gone' });
    await w.clock.advance(s(2));
    assert.equal(w.lock.read()!.record.holderIdentity, 'gone');
    await w.clock.advance(s(10));
    assert.equal(a.elector.isLeader() || b.elector.isLeader(), false, 'reserved for the bound');

    await w.clock.advance(s(10)); // 15 s bound + a retry period
    const holder = w.lock.read()!.record.holderIdentity;
    assert.ok(holder === 'a' || holder === 'b', `taken after the bound (holder ${holder})`);
    assert.equal(w.lock.read()!.record.preferredHolder, undefined, 'no handoff loop');
    await Promise.all([a.elector.stop(), b.elector.stop()]);
  });
});

describe('LeaderElector: coordinated leader election (coordinated option)', () => {
  test('never creates the Lease: it waits for the controller', async () => {
    const w = world();
    const a = coordinatedCandidate('a', w);
    a.elector.start();
    await w.clock.advance(s(30));

    assert.equal(w.lock.read(), undefined);
    assert.equal(a.elector.isLeader(), false);
    await a.elector.stop();
  });

  test('never takes a free or an expired Lease', async () => {
    const w = world();
    const a = coordinatedBesideReleasedLease(w, 2);
    await w.clock.advance(s(10));
    assert.equal(a.elector.isLeader(), false, 'free');

    w.lock.set({
      holderIdentity: 'x',
      leaseDurationSeconds: 5,
      acquireTime: w.clock.wallNow(),
      renewTime: w.clock.wallNow(),
      leaseTransitions: 2,
      strategy: STRATEGY,
    });
    await w.clock.advance(s(30));
    assert.equal(a.elector.isLeader(), false, 'expired');
    assert.equal(w.lock.read()!.record.holderIdentity, 'x');
    await a.elector.stop();
  });

  test('leads when the controller names it: takes up the term with leaseTransitions + 1 and acquireTime, keeping strategy', async () => {
    const w = world();
    const a = coordinatedBesideReleasedLease(w, 3);
    await w.clock.advance(s(1));

    controllerNames(w, 'a');
    await w.clock.advance(s(2));

    assert.equal(a.elector.isLeader(), true);
    assert.equal(a.elector.term?.leaseTransitions, 4);
    const record = w.lock.read()!.record;
    assert.equal(record.holderIdentity, 'a');
    assert.equal(record.leaseTransitions, 4);
    assert.deepEqual(record.acquireTime, a.elector.term?.acquiredAt);
    assert.equal(record.strategy, STRATEGY);
    assert.equal(record.leaseDurationSeconds, 15, 'its own leaseDuration from then on');
    await a.elector.stop();
  });

  test('a candidate the controller does not name only follows', async () => {
    const w = world();
    const { a, b } = startedWithANamed(w);
    await w.clock.advance(s(20));

    assert.equal(a.elector.isLeader(), true);
    assert.equal(b.elector.isLeader(), false);
    assert.equal(b.elector.leader, 'a');
    await Promise.all([a.elector.stop(), b.elector.stop()]);
  });

  test('the fencing token strictly increases across namings that leave leaseTransitions unchanged', async () => {
    const w = world();
    const { a, b } = startedWithANamed(w);
    await w.clock.advance(s(2));
    // A better candidate appears: the controller asks a to step aside for b.
    patch(w, { preferredHolder: 'b' });
    await w.clock.advance(s(4));
    assert.equal(b.elector.isLeader(), true);
    // b crashes (stops renewing, no release); the controller names a on expiry.
    await b.elector.stop();
    controllerNames(w, 'a');
    await w.clock.advance(s(2));

    assert.equal(a.elector.isLeader(), true);
    const tokens = [...a.log.terms, ...b.log.terms]
      .sort((x, y) => x.acquiredAt.getTime() - y.acquiredAt.getTime())
      .map((t) => t.leaseTransitions);
    assert.deepEqual(tokens, [1, 2, 3]);
    await a.elector.stop();
  });

  test('a Lease the controller recreates (leaseTransitions 0) continues from the highest seen', async () => {
    const w = world();
    const a = coordinatedCandidate('a', w);
    a.elector.start();
    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 5, leaseTransitions: 9 });
    await w.clock.advance(s(2));
    w.lock.delete();
    await w.clock.advance(s(2));
    controllerNames(w, 'a');
    await w.clock.advance(s(2));

    assert.equal(a.elector.term?.leaseTransitions, 10);
    await a.elector.stop();
  });

  test('registers its candidacy on start and withdraws it on stop, before the release', async () => {
    const w = world();
    const a = coordinatedCandidate('a', w);
    a.elector.start();
    await w.clock.advance(0);
    assert.deepEqual(a.candidacy.events, ['registered']);
    controllerNames(w, 'a');
    await w.clock.advance(s(2));
    const writesWhileLeading = w.lock.writes.length;

    await a.elector.stop();

    assert.deepEqual(a.candidacy.events, [
      'registered',
      `withdrawn after ${writesWhileLeading} writes`,
    ]);
    assert.equal(w.lock.writes.length, writesWhileLeading + 1, 'then the release');
    assert.equal(w.lock.read()!.record.holderIdentity, '');
    assert.equal(w.lock.read()!.record.strategy, STRATEGY);
  });

  test('rejects a candidacy whose identity is not the elector’s', () => {
    const w = world();
    assert.throws(
      () =>
        new LeaderElector({
          lock: w.lock,
          identity: 'a',
          clock: w.clock,
          coordinated: new RecordingCandidacy('b', w),
        }),
      (error: unknown) =>
        error instanceof InvalidLeaderElectionOptionError && error.option === 'coordinated',
    );
  });
});
