import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TEMPLATE_BACKOFF_BASE_MS } from '../../../dist/esm/core/handoff/newer-template-yield.js';
import type { LeadershipChangeReason, LeaderElector, LeaderElectorOptions } from 'nest-leader/core';
import { candidate, s, SlowLock, world } from './elector.fixture.js';

type World = ReturnType<typeof world>;

/** The default settle time at the fixture's timings: 45 s (more than 2 × leaseDuration). */
const SETTLE_MS = s(45);

/**
 * A candidate whose requests can be cut off for good (`crash()`: its process is gone — no
 * renewal, no withdrawal, its advertisement left behind), recording the reasons its terms
 * began with.
 */
function pod(identity: string, w: World, options: Partial<LeaderElectorOptions>) {
  const link = new SlowLock(w.lock, w.clock, 0);
  const reasons: LeadershipChangeReason[] = [];
  const c = candidate(
    identity,
    { ...w, lock: link as unknown as World['lock'] },
    { observer: { termStarted: (event) => reasons.push(event.reason) }, ...options },
  );
  c.elector.start();
  return {
    ...c,
    reasons,
    crash: () => {
      link.latencyMs = 1e12;
    },
    /** Every request answered `ms` after it was sent, from now on. */
    slow: (ms: number) => {
      link.latencyMs = ms;
    },
  };
}

/** `old-1` and `old-2` (template `aaa`) run, `old-1` leads. */
async function oldTemplate(w: World) {
  const leader = pod('old-1', w, { podTemplateHash: 'aaa' });
  await w.clock.advance(s(1));
  const peer = pod('old-2', w, { podTemplateHash: 'aaa' });
  await w.clock.advance(s(1));
  return { leader, peer };
}

const holder = (w: World) => w.lock.read()!.record.holderIdentity;
const transitions = (w: World) => w.lock.read()!.record.leaseTransitions;

async function stopAll(w: World, ...electors: LeaderElector[]): Promise<void> {
  let stopped = false;
  const stopping = Promise.all(electors.map((e) => e.stop())).then(() => (stopped = true));
  while (!stopped) await w.clock.advance(250);
  await stopping;
}

describe('LeaderElector: yieldToNewerTemplate (a running leader hands over to a new pod template)', () => {
  test('the leader keeps leading through the settle time, then hands over gracefully: one transition', async () => {
    const w = world();
    const { leader, peer } = await oldTemplate(w);
    const newPod = pod('new-1', w, { podTemplateHash: 'bbb' });

    await w.clock.advance(SETTLE_MS - s(2));
    assert.equal(holder(w), 'old-1', 'not before the new pod stayed advertised for the settle');
    assert.equal(leader.elector.isLeader(), true);

    // A renewal past the settle offers the Lease to the new pod, which accepts at its next poll
    // (retryPeriod 2 s); the leader hands off at its next offer poll and the new pod takes it.
    await w.clock.advance(s(8));
    assert.equal(holder(w), 'new-1');
    assert.equal(newPod.elector.isLeader(), true);
    assert.deepEqual(leader.log.events, ['started 0', 'stopped 0'], 'drained, not cut off');
    assert.deepEqual(newPod.log.events, ['started 1'], 'one handover, one transition');
    assert.deepEqual(newPod.reasons, ['preferred']);
    assert.match(
      leader.logger.messages('info').join('\n'),
      /"new-1" of the newer pod template "bbb" has stayed advertised .* for 45 s/,
    );

    await w.clock.advance(s(120));
    assert.equal(holder(w), 'new-1', 'the new leader does not yield back to the old template');
    assert.equal(transitions(w), 1);
    await stopAll(w, leader.elector, peer.elector, newPod.elector);
  });

  for (const dated of [true, false]) {
    test(`the only old pod's container restarts after the rollout's first new pod started (pod chaos seed 3344), ${dated ? 'dated by its pod: it still yields to the new template' : 'without its pod creation time: it never yields (the defect, kept as the fallback)'}`, async () => {
      const w = world();
      const podCreated = (): Date | undefined => (dated ? w.clock.wallNow() : undefined);
      const oldCreated = podCreated();
      const old = pod('old-1', w, { podTemplateHash: 'aaa', podCreationTimestamp: oldCreated });
      await w.clock.advance(s(60));
      assert.equal(holder(w), 'old-1');
      const newPod = pod('new-1', w, {
        podTemplateHash: 'bbb',
        podCreationTimestamp: podCreated(),
      });
      // SIGKILL; the kubelet restarts the container in the same pod 0.2 s later. new-1's
      // requests are slowed down until the Lease is taken over, so that the restarted
      // container takes it, as in seed 3344.
      await w.clock.advance(200);
      old.crash();
      newPod.slow(s(5));
      const restarted = pod('old-1', w, {
        podTemplateHash: 'aaa',
        podCreationTimestamp: oldCreated,
      });
      // The Lease expires (15 s): the restarted container takes it over.
      await w.clock.advance(s(20));
      assert.equal(transitions(w), 1, 'taken over once');
      assert.equal(holder(w), 'old-1');
      assert.equal(restarted.elector.isLeader(), true);
      newPod.slow(0);

      await w.clock.advance(SETTLE_MS + s(30));
      const expected = dated ? 'new-1' : 'old-1';
      assert.equal(
        holder(w),
        expected,
        dated ? 'yielded to the new template' : 'the old template looks newest: no yield',
      );
      if (dated) assert.deepEqual(newPod.reasons, ['preferred']);
      await w.clock.advance(s(120));
      assert.equal(holder(w), expected, 'and keeps leading: no yield back and forth');
      assert.ok(transitions(w) <= 2, `${transitions(w)} transitions`);
      await stopAll(w, restarted.elector, newPod.elector);
    });
  }

  test('a settled new pod that died is offered the Lease, never handed it: the leader leads on', async () => {
    const w = world();
    const { leader, peer } = await oldTemplate(w);
    const newPod = pod('new-1', w, { podTemplateHash: 'bbb' });
    await w.clock.advance(SETTLE_MS - s(5));
    newPod.crash(); // killed: its advertisement stays, unchanged, through the settle

    await w.clock.advance(s(20)); // settled, offered; the offer window (4 s) passes unanswered

    assert.equal(holder(w), 'old-1', 'not handed to a candidate that did not accept');
    assert.equal(transitions(w), 0);
    assert.deepEqual(leader.log.events, ['started 0'], 'its term went on');
    const advertised = (w.lock.read()!.record.candidates ?? []).map((c) => c.identity);
    assert.deepEqual(advertised.sort(), ['old-1', 'old-2'], "the dead pod's entry removed");
    assert.match(leader.logger.messages('info').join('\n'), /offers MemoryLock test to "new-1"/);
    await stopAll(w, leader.elector, peer.elector);
  });

  test('never to a candidate of the same or an older pod template', async () => {
    const w = world();
    // `old-0` of template `aaa` was created first (its startedAt is the earliest) but starts
    // campaigning only after the `bbb` pods lead: `aaa` is the older template.
    const early = candidate('old-0', w, { podTemplateHash: 'aaa' });
    await w.clock.advance(s(1));
    const leader = pod('new-1', w, { podTemplateHash: 'bbb' });
    await w.clock.advance(s(1));
    const samePeer = pod('new-2', w, { podTemplateHash: 'bbb' });
    early.elector.start();

    await w.clock.advance(s(300));

    assert.equal(holder(w), 'new-1');
    assert.equal(transitions(w), 0, 'no handover at all');
    assert.deepEqual(leader.log.events, ['started 0']);
    await stopAll(w, leader.elector, samePeer.elector, early.elector);
  });

  test('a new template that never advertises (its image is never pulled) takes nothing', async () => {
    const w = world();
    const { leader, peer } = await oldTemplate(w);
    // A pod of the new template exists as an object, but its process never starts.
    candidate('new-1', w, { podTemplateHash: 'bbb' });

    await w.clock.advance(s(600));

    assert.equal(holder(w), 'old-1');
    assert.deepEqual(leader.log.events, ['started 0']);
    assert.equal(transitions(w), 0);
    await stopAll(w, leader.elector, peer.elector);
  });

  test('a new pod that crashes and restarts within the settle time starts its settle over', async () => {
    const w = world();
    const { leader, peer } = await oldTemplate(w);
    const first = pod('new-1', w, { podTemplateHash: 'bbb' });
    await w.clock.advance(s(20));
    first.crash(); // its entry stays behind until the restarted process advertises again
    await w.clock.advance(s(10)); // a crash-loop back-off of 10 s
    const restarted = pod('new-1', w, { podTemplateHash: 'bbb' });

    await w.clock.advance(SETTLE_MS - s(4));
    assert.equal(holder(w), 'old-1', '30 s after the first advertisement, but not the second');

    await w.clock.advance(s(10)); // offered, accepted at its next poll, handed over
    assert.equal(holder(w), 'new-1');
    assert.equal(restarted.elector.isLeader(), true);
    assert.equal(transitions(w), 1);
    await stopAll(w, leader.elector, peer.elector, restarted.elector);
  });

  test('a new term starts the settle over: advertisements seen in an earlier term do not count', async () => {
    const w = world();
    const { leader, peer } = await oldTemplate(w);
    const newPod = pod('new-1', w, { podTemplateHash: 'bbb' });
    await w.clock.advance(s(20)); // seen by old-1 for 20 s
    const first = leader.elector.transferLeadership('old-2');
    await w.clock.advance(s(4)); // old-2 leads; it sees new-1 from its first term's record on
    assert.equal(holder(w), 'old-2');
    await first;
    const second = peer.elector.transferLeadership('old-1');
    await w.clock.advance(s(4));
    await second;
    assert.equal(holder(w), 'old-1', 'old-1 leads again, 28 s after it first saw new-1');

    await w.clock.advance(SETTLE_MS - s(4));
    assert.equal(holder(w), 'old-1', 'not before new-1 settled within this term');
    await w.clock.advance(s(8));
    assert.equal(holder(w), 'new-1');
    await stopAll(w, leader.elector, peer.elector, newPod.elector);
  });

  test('off: the leader keeps the Lease however long a newer template advertises', async () => {
    const w = world();
    const leader = pod('old-1', w, { podTemplateHash: 'aaa', yieldToNewerTemplate: false });
    await w.clock.advance(s(1));
    const newPod = pod('new-1', w, { podTemplateHash: 'bbb' });

    await w.clock.advance(s(300));

    assert.equal(holder(w), 'old-1');
    assert.equal(transitions(w), 0);
    await stopAll(w, leader.elector, newPod.elector);
  });

  test('newerTemplateSettleSeconds sets the settle time', async () => {
    const w = world();
    const leader = pod('old-1', w, { podTemplateHash: 'aaa', newerTemplateSettleSeconds: 5 });
    await w.clock.advance(s(1));
    const newPod = pod('new-1', w, { podTemplateHash: 'bbb' });

    await w.clock.advance(s(10));

    assert.equal(holder(w), 'new-1');
    await stopAll(w, leader.elector, newPod.elector);
  });

  test('a crash-looping new template: its lost leader is backed off on the Lease, no bouncing', async () => {
    const w = world();
    const { leader, peer } = await oldTemplate(w);
    const newPod = pod('new-1', w, { podTemplateHash: 'bbb' });
    await w.clock.advance(SETTLE_MS + s(6));
    assert.equal(holder(w), 'new-1', 'settled, offered, accepted, handed over');

    newPod.crash(); // it led, then crashed without a handoff: its Lease expires
    await w.clock.advance(s(20));
    const taker = holder(w);
    assert.ok(taker === 'old-1' || taker === 'old-2', `an old pod took over (${taker})`);
    assert.deepEqual(w.lock.read()!.record.templateBackoff, {
      podTemplateHash: 'bbb',
      failures: 1,
    });
    const afterLoss = transitions(w);
    assert.equal(afterLoss, 2, 'the handover and the takeover');

    // The crashed pod restarts and advertises again, and again stays advertised past the settle.
    const restarted = pod('new-1', w, { podTemplateHash: 'bbb' });
    await w.clock.advance(TEMPLATE_BACKOFF_BASE_MS - s(30));
    assert.equal(holder(w), taker, 'no yield to the backed-off template');
    assert.equal(transitions(w), afterLoss);
    const oldLeader = taker === 'old-1' ? leader : peer;
    assert.match(
      oldLeader.logger.messages('warn').join('\n'),
      /template "bbb" was lost without a handoff \(1 in a row\)/,
    );

    // Once the backoff has passed, the leader tries the template again.
    await w.clock.advance(s(40));
    assert.equal(holder(w), 'new-1');
    assert.equal(restarted.elector.isLeader(), true);

    // Lost a second time: the backoff doubles.
    restarted.crash();
    await w.clock.advance(s(20));
    assert.deepEqual(w.lock.read()!.record.templateBackoff, {
      podTemplateHash: 'bbb',
      failures: 2,
    });
    const again = pod('new-1', w, { podTemplateHash: 'bbb' });
    const second = transitions(w);
    await w.clock.advance(2 * TEMPLATE_BACKOFF_BASE_MS - s(30));
    assert.equal(transitions(w), second, 'no yield for twice the backoff');
    await stopAll(w, leader.elector, peer.elector, again.elector);
  });
});
