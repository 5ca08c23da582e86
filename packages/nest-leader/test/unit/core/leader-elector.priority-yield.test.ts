import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LeadershipChangeReason, LeaderElector, LeaderElectorOptions } from 'nest-leader/core';
import { MemoryLock, RecordingLogger } from 'nest-leader/testing';
import { candidate, s, settle, world } from './elector.fixture.js';

type World = ReturnType<typeof world>;

/** A candidate that records the reason each of its terms began with. */
function recorded(identity: string, w: World, options: Partial<LeaderElectorOptions>) {
  const reasons: LeadershipChangeReason[] = [];
  const c = candidate(identity, w, {
    observer: { termStarted: (event) => reasons.push(event.reason) },
    ...options,
  });
  return { ...c, reasons };
}

/**
 * `low` (priority 1) starts and leads; 1 s later `high` (priority 5) starts and advertises
 * itself, 1 s before the leader's next renewal.
 */
async function lowThenHigh(
  w: World,
  low: Partial<LeaderElectorOptions>,
  high: Partial<LeaderElectorOptions> = {},
) {
  const leader = recorded('low', w, { priority: 1, ...low });
  leader.elector.start();
  await w.clock.advance(s(1));
  const challenger = recorded('high', w, { priority: 5, ...high });
  challenger.elector.start();
  await w.clock.advance(0);
  return { leader, challenger };
}

async function stopAll(w: World, ...electors: LeaderElector[]): Promise<void> {
  await settle(w, Promise.all(electors.map((e) => e.stop())));
}

describe('LeaderElector: yieldToHigherPriority', () => {
  test('the leader hands over, draining first, at its next renewal after a higher priority advertises itself', async () => {
    const w = world();
    const { leader, challenger } = await lowThenHigh(w, { yieldToHigherPriority: true });
    assert.equal(leader.elector.isLeader(), true, 'no renewal has seen the advertisement yet');

    await w.clock.advance(s(1)); // the renewal conflicts with the advertisement, reads, offers
    assert.equal(leader.elector.isLeader(), true, 'leads on while its offer is open');
    assert.equal(w.lock.read()!.record.handoffOffer?.to, 'high', 'offered to it');
    // high accepts at its next poll (it does not watch a MemoryLock), the leader hands off at its
    // next offer poll, high takes it at its next (fast) read.
    await w.clock.advance(s(3));

    assert.equal(leader.elector.isLeader(), false);
    assert.equal(challenger.elector.isLeader(), true);
    assert.deepEqual(leader.log.events, ['started 0', 'stopped 0']);
    assert.deepEqual(challenger.log.events, ['started 1'], 'one handover, one transition');
    assert.deepEqual(challenger.reasons, ['preferred']);
    assert.match(leader.logger.messages('info').join('\n'), /"high" of priority 5 advertises/);
    await stopAll(w, leader.elector, challenger.elector);
  });

  test('never by force: without the option the leader keeps the Lease', async () => {
    const w = world();
    const { leader, challenger } = await lowThenHigh(w, {});

    await w.clock.advance(s(20));

    assert.equal(leader.elector.isLeader(), true);
    assert.equal(challenger.elector.isLeader(), false);
    assert.deepEqual(challenger.log.events, []);
    await stopAll(w, leader.elector, challenger.elector);
  });

  test('an equal or lower priority is no reason to yield, and the new leader does not yield back', async () => {
    const w = world();
    const { leader, challenger } = await lowThenHigh(
      w,
      { yieldToHigherPriority: true, priority: 5 },
      { yieldToHigherPriority: true, priority: 5 },
    );
    const lower = recorded('lower', w, { priority: 0, yieldToHigherPriority: true });
    lower.elector.start();

    await w.clock.advance(s(20));

    assert.equal(leader.elector.isLeader(), true);
    assert.deepEqual(leader.log.events, ['started 0']);
    await stopAll(w, leader.elector, challenger.elector, lower.elector);
  });

  test('among several higher priorities, the highest; the yielded-to leader then stays', async () => {
    const w = world();
    const { leader, challenger } = await lowThenHigh(
      w,
      { yieldToHigherPriority: true },
      { yieldToHigherPriority: true },
    );
    const highest = recorded('highest', w, { priority: 9, yieldToHigherPriority: true });
    highest.elector.start();

    await w.clock.advance(s(20));

    assert.equal(highest.elector.isLeader(), true);
    assert.equal(challenger.elector.isLeader(), false);
    assert.deepEqual(highest.reasons, ['preferred']);
    assert.equal(w.lock.read()!.record.leaseTransitions, 1, 'one transition');
    await stopAll(w, leader.elector, challenger.elector, highest.elector);
  });

  test('a lock that stores no advertisements: a warning at construction naming the option', () => {
    const logger = new RecordingLogger();
    const lock = new MemoryLock({ name: 'plain' });
    Object.defineProperty(lock, 'storesCandidates', { value: false });
    candidate('a', { ...world(), lock, logger }, { yieldToHigherPriority: true });
    assert.match(logger.messages('warn').join('\n'), /yieldToHigherPriority has no effect/);
  });
});
