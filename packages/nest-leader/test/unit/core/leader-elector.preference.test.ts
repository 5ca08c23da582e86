import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  InvalidLeaderElectionOptionError,
  LeaderElector,
  LockConflictError,
  LeadershipTransferError,
  type LeaderElectorOptions,
} from 'nest-leader';
import {
  acceptsThenDies,
  candidate,
  oldTemplateOnly,
  s,
  settle,
  world,
} from './elector.fixture.js';

type World = ReturnType<typeof world>;

/**
 * A rollout in memory: `old-1` (template `aaa`) starts and leads; `old-2` (`aaa`) starts 1 s
 * later, `new-1` (`bbb`) 1 s after that; all have seen the Lease held by `old-1`.
 */
async function rollout(w: World, overrides: Partial<LeaderElectorOptions> = {}) {
  const leader = candidate('old-1', w, { podTemplateHash: 'aaa', ...overrides });
  leader.elector.start();
  await w.clock.advance(s(1));
  const oldPeer = candidate('old-2', w, { podTemplateHash: 'aaa' });
  oldPeer.elector.start();
  await w.clock.advance(s(1));
  const newPod = candidate('new-1', w, { podTemplateHash: 'bbb' });
  newPod.elector.start();
  await w.clock.advance(s(1));
  return { leader, oldPeer, newPod, all: [leader, oldPeer, newPod].map((c) => c.elector) };
}

/** `a` advertises itself and leads; `b`, which advertises nothing, follows. */
async function soleAdvertiser(w: World) {
  const a = candidate('a', w, { podTemplateHash: 'h' });
  const b = candidate('b', w);
  a.elector.start();
  await w.clock.advance(s(1));
  b.elector.start();
  await w.clock.advance(s(1));
  return { a, b };
}

/** Adds an advertisement for `identity` (template `hash`, started now) as a foreign write. */
function advertiseStandIn(w: World, identity: string, hash: string): void {
  const { record } = w.lock.read()!;
  const entry = { identity, podTemplateHash: hash, priority: 0, startedAt: w.clock.wallNow() };
  w.lock.set({ ...record, candidates: [...(record.candidates ?? []), entry] });
}

function advertised(w: World): string[] {
  return (w.lock.read()!.record.candidates ?? []).map((c) => c.identity).sort();
}

/**
 * A pod of the new template (`new-1`, `bbb`) starts while the leader is stopping; resolves once
 * the stop is done and the new pod had a retry period to take what was handed to it.
 */
async function newPodArrives(w: World, stopping: Promise<unknown>) {
  const newPod = candidate('new-1', w, { podTemplateHash: 'bbb' });
  newPod.elector.start();
  await w.clock.advance(s(1));
  await settle(w, stopping);
  await w.clock.advance(s(1.2));
  return newPod;
}

/**
 * Stops them all, the clock running (a stopping leader may wait for a newer template, and for
 * a candidate to accept its offer).
 */
async function stopAll(electors: LeaderElector[], w: World): Promise<void> {
  await settle(w, Promise.all(electors.map((e) => e.stop())));
}

describe('LeaderElector: candidates advertise themselves in the election record', () => {
  test('each candidate with a podTemplateHash advertises itself once, at start, with its start time', async () => {
    const w = world();
    const { all } = await rollout(w);

    const candidates = w.lock.read()!.record.candidates!;
    assert.deepEqual(
      candidates.map((c) => [c.identity, c.podTemplateHash, c.priority]),
      [
        ['old-1', 'aaa', 0],
        ['old-2', 'aaa', 0],
        ['new-1', 'bbb', 0],
      ],
    );
    const startedAt = candidates.map(
      (c) => c.startedAt.getTime() - candidates[0]!.startedAt.getTime(),
    );
    assert.deepEqual(startedAt, [0, s(1), s(2)]);
    await stopAll(all, w);
  });

  test('steady state costs nothing: after advertising, the only writes are the leader’s renewals', async () => {
    const w = world();
    // Without the yield to the newer template, which would hand over after its settle time.
    const { all } = await rollout(w, { yieldToNewerTemplate: false });
    const writesBefore = w.lock.writes.length;

    await w.clock.advance(s(60));

    const writes = w.lock.writes.slice(writesBefore - w.lock.writes.length);
    assert.equal(writes.length, 30, 'one renewal per retryPeriod (2 s)');
    for (const write of writes) {
      assert.equal(write.record.holderIdentity, 'old-1');
      assert.equal(write.record.candidates?.length, 3);
    }
    await stopAll(all, w);
  });

  test('without podTemplateHash or priority a candidate advertises nothing', async () => {
    const w = world();
    const a = candidate('a', w);
    const b = candidate('b', w);
    a.elector.start();
    b.elector.start();
    await w.clock.advance(s(5));

    assert.equal(w.lock.read()!.record.candidates, undefined);
    await stopAll([a.elector, b.elector], w);
  });

  test('an advertisement is not a renewal: followers still take over leaseDuration after the last real change', async () => {
    const w = world();
    w.lock.set({
      holderIdentity: 'crashed',
      leaseDurationSeconds: 15,
      leaseTransitions: 4,
      acquireTime: w.clock.wallNow(),
      renewTime: w.clock.wallNow(),
    });
    const b = candidate('b', w, { podTemplateHash: 'aaa' });
    b.elector.start();
    await w.clock.advance(s(10));
    const c = candidate('c', w, { podTemplateHash: 'bbb' });
    c.elector.start();
    await w.clock.advance(s(1));
    assert.deepEqual(advertised(w), ['b', 'c'], 'both advertised while "crashed" held it');

    await w.clock.advance(s(6.5));

    assert.equal(b.elector.isLeader(), true, 'b took over 15 s after it saw the record, not later');
    await stopAll([b.elector, c.elector], w);
  });

  test('a follower removes its advertisement on stop, leaving the election record as it was', async () => {
    const w = world();
    const { leader, oldPeer, newPod } = await rollout(w);
    const before = w.lock.read()!.record;

    await oldPeer.elector.stop();

    const after = w.lock.read()!.record;
    assert.deepEqual(advertised(w), ['new-1', 'old-1']);
    assert.equal(after.holderIdentity, before.holderIdentity);
    assert.deepEqual(after.renewTime, before.renewTime);
    assert.equal(after.leaseTransitions, before.leaseTransitions);
    await w.clock.advance(s(5));
    assert.equal(leader.elector.isLeader(), true, 'the leader renews on');
    await stopAll([leader.elector, newPod.elector], w);
  });

  test('a stopping follower’s removal outlasts conflicts: a whole rollout writing the Lease at once does not leave it advertised', async () => {
    const w = world();
    const { leader, oldPeer, newPod } = await rollout(w);

    // Eight conflicts in a row (others' writes landing first): more than the give-up limit for
    // failures, which conflicts are not.
    w.lock.failNext('update', new LockConflictError(w.lock.description, 'update'), 8);
    await oldPeer.elector.stop();

    assert.deepEqual(advertised(w), ['new-1', 'old-1']);
    await stopAll([leader.elector, newPod.elector], w);
  });

  test('at most 32 advertisements are kept: the earliest-started are dropped', async () => {
    const w = world();
    const electors: LeaderElector[] = [];
    for (let i = 0; i < 33; i++) {
      const { elector } = candidate(`c${i}`, w, { priority: 1 });
      elector.start();
      electors.push(elector);
      await w.clock.advance(s(0.1));
    }
    await w.clock.advance(s(3));

    const identities = advertised(w);
    assert.equal(identities.length, 32);
    assert.equal(identities.includes('c0'), false, 'the earliest started was dropped');
    await stopAll(electors, w);
  });
});

describe('LeaderElector: transferLeadership() without a target hands to the preferred candidate', () => {
  test('a rollout: the candidate of the newest pod template takes it, not the older one', async () => {
    const w = world();
    const { leader, oldPeer, newPod, all } = await rollout(w);

    await settle(w, leader.elector.transferLeadership());
    assert.deepEqual(w.lock.read()!.record.handoff, {
      to: 'new-1',
      leaseTransitions: 1,
      preferred: true,
    });

    await w.clock.advance(s(1.2));
    assert.equal(newPod.elector.isLeader(), true);
    assert.equal(oldPeer.elector.isLeader(), false);
    assert.equal(w.lock.read()!.record.leaseTransitions, 1);
    await stopAll(all, w);
  });

  test('priority ranks candidates of one template; the leader never picks itself', async () => {
    const w = world();
    const a = candidate('a', w, { podTemplateHash: 'h', priority: 100 });
    a.elector.start();
    await w.clock.advance(s(1));
    const b = candidate('b', w, { podTemplateHash: 'h', priority: 1 });
    const c = candidate('c', w, { podTemplateHash: 'h', priority: 2 });
    b.elector.start();
    c.elector.start();
    await w.clock.advance(s(1));

    await settle(w, a.elector.transferLeadership());

    assert.equal(w.lock.read()!.record.holderIdentity, 'c');
    await stopAll([a.elector, b.elector, c.elector], w);
  });

  test('no other candidate advertises itself: LeadershipTransferError no-candidate after one read, the term goes on', async () => {
    const w = world();
    const { a, b } = await soleAdvertiser(w);

    const rejected = assert.rejects(
      a.elector.transferLeadership(),
      (error: unknown) =>
        error instanceof LeadershipTransferError &&
        error.reason === 'no-candidate' &&
        error.to === undefined &&
        /no other candidate advertises itself/.test(error.message),
    );
    await w.clock.advance(0);
    await rejected;
    await w.clock.advance(s(2));
    assert.equal(a.elector.isLeader(), true);
    assert.equal(a.elector.term?.signal.aborted, false);
    await stopAll([a.elector, b.elector], w);
  });

  test('a target that is gone (SIGKILLed, its advertisement left behind) is offered it, does not accept, is removed; the next one gets it', async () => {
    const w = world();
    const { leader, oldPeer, newPod, all } = await rollout(w);
    // new-1 is SIGKILLed: it neither answers nor removes its advertisement.
    const ghost = w.lock.read()!.record.candidates!.find((c) => c.identity === 'new-1')!;
    await settle(w, newPod.elector.stop());
    const current = w.lock.read()!;
    w.lock.set({ ...current.record, candidates: [...current.record.candidates!, ghost] });
    assert.ok(advertised(w).includes('new-1'));

    const startedMs = w.clock.nowMs();
    await settle(w, leader.elector.transferLeadership());

    const { record } = w.lock.read()!;
    assert.equal(record.holderIdentity, 'old-2', 'handed to the live candidate, not the ghost');
    assert.equal(record.leaseTransitions, 1, 'one handover, one transition');
    assert.equal(
      record.candidates?.some((c) => c.identity === 'new-1'),
      false,
      'ghost removed',
    );
    const tookMs = w.clock.nowMs() - startedMs;
    assert.ok(tookMs <= s(4) + s(2.5), `one offer window, then one retry period: ${tookMs} ms`);
    await w.clock.advance(s(2.5));
    assert.equal(oldPeer.elector.isLeader(), true);
    await stopAll(all, w);
  });
});

describe('LeaderElector: handoff on stop (handoffOnStop)', () => {
  test('stop() hands the Lease to the newest-template candidate instead of releasing it, and drops its own advertisement', async () => {
    const w = world();
    const { leader, oldPeer, newPod } = await rollout(w);
    const writesBefore = w.lock.writes.length;

    await settle(w, leader.elector.stop());

    const { record } = w.lock.read()!;
    assert.equal(record.holderIdentity, 'new-1');
    assert.deepEqual(record.handoff, { to: 'new-1', leaseTransitions: 1, preferred: true });
    assert.deepEqual(advertised(w), ['new-1', 'old-2']);
    const steps = w.lock.writes
      .slice(writesBefore)
      .map(({ record: r }) =>
        r.handoff
          ? `handoff to ${r.handoff.to}`
          : r.handoffOffer?.accepted
            ? `accepted by ${r.handoffOffer.to}`
            : r.handoffOffer
              ? `offer to ${r.handoffOffer.to}`
              : 'renewal',
      )
      .filter((step, i, all) => step !== 'renewal' && step !== all[i - 1]); // renewals carry it
    assert.deepEqual(steps, ['offer to new-1', 'accepted by new-1', 'handoff to new-1']);
    assert.match(
      leader.logger.messages().join('\n'),
      /handed Lease|handed MemoryLock test to "new-1"/,
    );

    await w.clock.advance(s(1.2));
    assert.equal(newPod.elector.isLeader(), true);
    assert.equal(oldPeer.elector.isLeader(), false);
    await stopAll([oldPeer.elector, newPod.elector], w);
  });

  test('a rollout stops the leader and its peers before the new template advertises itself: the leader leads on, renewing, until a new pod does, then hands to it', async () => {
    const w = world();
    const { leader, oldPeer } = await oldTemplateOnly(w);

    let stopped = false;
    const stopping = leader.elector.stop().then(() => (stopped = true));
    const peerStopping = oldPeer.elector.stop();
    const renewTime = () => w.lock.read()!.record.renewTime!.getTime();
    const renewedBefore = renewTime();
    await w.clock.advance(s(3));
    await peerStopping;
    assert.deepEqual(advertised(w), ['old-1'], 'the old peer withdrew');
    assert.equal(stopped, false, 'still waiting');
    assert.equal(leader.elector.isLeader(), true, 'leads on while it waits');
    assert.equal(leader.elector.term?.signal.aborted, false, 'its term goes on');
    assert.ok(renewTime() > renewedBefore, 'and renews');

    const newPod = candidate('new-1', w, { podTemplateHash: 'bbb' });
    newPod.elector.start();
    await w.clock.advance(s(1));
    await settle(w, stopping);
    assert.deepEqual(w.lock.read()!.record.handoff, {
      to: 'new-1',
      leaseTransitions: 1,
      preferred: true,
    });
    assert.match(leader.logger.messages().join('\n'), /sees "new-1" of a newer pod template/);
    await w.clock.advance(s(1.2));
    assert.equal(newPod.elector.isLeader(), true);
    await stopAll([newPod.elector], w);
  });

  test('a plain stop (a peer of its template stays advertised): hands to the peer after the settle time, not renewDeadline', async () => {
    const w = world();
    const { leader, oldPeer } = await oldTemplateOnly(w);

    const startedMs = w.clock.nowMs();
    let stoppedMs: number | undefined;
    const stopping = leader.elector.stop().then(() => (stoppedMs = w.clock.nowMs()));
    while (stoppedMs === undefined) await w.clock.advance(250);
    await stopping;
    const tookMs = stoppedMs - startedMs;
    // Half of renewDeadline (10 s), leading on meanwhile; then the peer accepts the offer at its
    // next read (a retry period, 2 s) and the leader sees it at its next offer poll (250 ms).
    assert.ok(tookMs >= s(5) && tookMs < s(5 + 2 + 0.5), `took ${tookMs} ms`);
    assert.deepEqual(w.lock.read()!.record.handoff, {
      to: 'old-2',
      leaseTransitions: 1,
      preferred: true,
    });
    await stopAll([oldPeer.elector], w);
  });

  test('a rollout whose old peer withdraws late (3 s after the leader’s stop, a loaded node): the leader still waits for the new pod and hands to it — one transition', async () => {
    const w = world();
    const { leader, oldPeer } = await oldTemplateOnly(w);
    const transitionsBefore = w.lock.read()!.record.leaseTransitions;

    const stopping = leader.elector.stop();
    await w.clock.advance(s(3));
    const peerStopping = oldPeer.elector.stop();
    await w.clock.advance(s(1));
    await peerStopping;
    const newPod = await newPodArrives(w, stopping);

    assert.equal(newPod.elector.isLeader(), true, 'the new pod leads');
    assert.equal(w.lock.read()!.record.leaseTransitions, transitionsBefore + 1);
    assert.deepEqual(
      newPod.log.events,
      [`started ${transitionsBefore + 1}`],
      'one term, at the next leaseTransitions',
    );
    await stopAll([newPod.elector], w);
  });

  test('newerTemplateWaitSeconds: the stopping leader leads on that long, past renewDeadline, and hands to a new pod that advertises itself after 15 s', async () => {
    const w = world();
    const leader = candidate('old-1', w, { podTemplateHash: 'aaa', newerTemplateWaitSeconds: 20 });
    leader.elector.start();
    await w.clock.advance(s(1));

    let stopped = false;
    const stopping = leader.elector.stop().then(() => (stopped = true));
    await w.clock.advance(s(15));
    assert.equal(stopped, false, 'still waiting after renewDeadline (10 s)');
    assert.equal(leader.elector.isLeader(), true, 'leading on');
    const newPod = await newPodArrives(w, stopping);

    assert.equal(newPod.elector.isLeader(), true);
    assert.deepEqual(newPod.log.events, ['started 1'], 'one transition');
    assert.match(leader.logger.messages().join('\n'), /leading on for at most 20s/);
    await stopAll([newPod.elector], w);
  });

  test('a peer of its own template that advertises itself only after the stop began (a pod still starting, replaced by the same rollout) does not end the wait: the leader hands to the new template', async () => {
    const w = world();
    const leader = candidate('old-1', w, { podTemplateHash: 'aaa', newerTemplateWaitSeconds: 20 });
    leader.elector.start();
    await w.clock.advance(s(1));

    const stopping = leader.elector.stop();
    await w.clock.advance(s(1));
    const lateOld = candidate('old-late', w, { podTemplateHash: 'aaa' });
    lateOld.elector.start();
    await w.clock.advance(s(8));
    assert.equal(leader.elector.isLeader(), true, 'still leading on past the settle time');
    const newPod = await newPodArrives(w, stopping);

    assert.equal(newPod.elector.isLeader(), true);
    assert.equal(lateOld.elector.isLeader(), false);
    assert.deepEqual(newPod.log.events, ['started 1']);
    await stopAll([newPod.elector, lateOld.elector], w);
  });

  const withoutHandoff: [string, Partial<LeaderElectorOptions>, string][] = [
    ['handoffOnStop: false releases to anyone, as before', { handoffOnStop: false }, ''],
    [
      'releaseOnStop: false leaves the Lease held, no handoff either; only the advertisement goes',
      { releaseOnStop: false },
      'old-1',
    ],
  ];
  for (const [name, overrides, holder] of withoutHandoff) {
    test(name, async () => {
      const w = world();
      const { leader, oldPeer, newPod } = await rollout(w, overrides);

      await leader.elector.stop();

      const { record } = w.lock.read()!;
      assert.equal(record.holderIdentity, holder);
      assert.equal(record.handoff, undefined);
      assert.deepEqual(advertised(w), ['new-1', 'old-2']);
      await stopAll([oldPeer.elector, newPod.elector], w);
    });
  }

  test('no other candidate advertises itself: stop() releases', async () => {
    const w = world();
    const { a, b } = await soleAdvertiser(w);

    // It leads on for renewDeadline in case a rollout's new pods advertise themselves.
    const startedMs = w.clock.nowMs();
    await stopAll([a.elector], w);
    assert.ok(w.clock.nowMs() - startedMs >= s(10), 'waited renewDeadline');

    assert.equal(w.lock.read()!.record.holderIdentity, '');
    assert.equal(w.lock.read()!.record.candidates, undefined);
    assert.match(a.logger.messages().join('\n'), /no other candidate advertises itself/);
    await b.elector.stop();
  });

  test('the handoff write fails: stop() releases instead, in the same stop', async () => {
    const w = world();
    const { leader, oldPeer, newPod } = await rollout(w);
    // The newest template's candidate accepts; the handoff write after it fails.
    advertiseStandIn(w, 'new-2', 'ccc');
    acceptsThenDies(w, 'new-2', () => w.lock.failNext('update', new Error('connection reset')));

    await settle(w, leader.elector.stop());

    assert.equal(w.lock.read()!.record.holderIdentity, '');
    assert.match(
      leader.logger.messages().join('\n'),
      /could not hand .* "new-2" on stop; releasing it instead/,
    );
    await w.clock.advance(s(2.4));
    assert.equal(oldPeer.elector.isLeader() || newPod.elector.isLeader(), true);
    await stopAll([oldPeer.elector, newPod.elector], w);
  });

  test('the handoff write hangs: stop() still releases within renewDeadline of the acceptance', async () => {
    const w = world();
    const { leader, oldPeer, newPod } = await rollout(w);
    let acceptedMs = 0;
    advertiseStandIn(w, 'new-2', 'ccc');
    acceptsThenDies(w, 'new-2', () => {
      acceptedMs = w.clock.nowMs();
      w.lock.hangNext('update');
    });

    await settle(w, leader.elector.stop());

    const tookMs = w.clock.nowMs() - acceptedMs;
    assert.ok(tookMs <= s(10) + 100, `stop took ${tookMs} ms after the acceptance`);
    const released = w.lock.writes.filter((write) => write.record.holderIdentity === '');
    assert.equal(released.length, 1, 'released after the handoff write timed out');
    assert.match(leader.logger.messages().join('\n'), /releasing it instead: Timed out/);
    await stopAll([oldPeer.elector, newPod.elector], w);
  });
});

describe('LeaderElector: preference options', () => {
  const lockAndIdentity = () => ({ lock: world().lock, identity: 'a' });

  test('podTemplateHash must be a label value; the error names the option and the rule', () => {
    for (const podTemplateHash of ['', 'has space', '-dash', 'x'.repeat(64), 7]) {
      assert.throws(
        () => new LeaderElector({ ...lockAndIdentity(), podTemplateHash } as LeaderElectorOptions),
        (error: unknown) =>
          error instanceof InvalidLeaderElectionOptionError &&
          error.option === 'podTemplateHash' &&
          /must be a label value/.test(error.message),
      );
    }
  });

  test('newerTemplateWaitSeconds must be a positive finite number of seconds', () => {
    for (const newerTemplateWaitSeconds of [0, -1, Number.POSITIVE_INFINITY, Number.NaN, '20']) {
      assert.throws(
        () =>
          new LeaderElector({
            ...lockAndIdentity(),
            newerTemplateWaitSeconds,
          } as LeaderElectorOptions),
        (error: unknown) =>
          error instanceof InvalidLeaderElectionOptionError &&
          error.option === 'newerTemplateWaitSeconds' &&
          /positive finite number of seconds/.test(error.message),
      );
    }
  });

  test('priority must be a whole int32; handoffOnStop a boolean', () => {
    for (const priority of [1.5, 2 ** 31, -(2 ** 31) - 1, '1', Number.NaN]) {
      assert.throws(
        () => new LeaderElector({ ...lockAndIdentity(), priority } as LeaderElectorOptions),
        (error: unknown) =>
          error instanceof InvalidLeaderElectionOptionError && error.option === 'priority',
      );
    }
    assert.throws(
      () =>
        new LeaderElector({
          ...lockAndIdentity(),
          handoffOnStop: 'yes',
        } as unknown as LeaderElectorOptions),
      (error: unknown) =>
        error instanceof InvalidLeaderElectionOptionError && error.option === 'handoffOnStop',
    );
    assert.doesNotThrow(() => new LeaderElector({ ...lockAndIdentity(), priority: -(2 ** 31) }));
  });
});
