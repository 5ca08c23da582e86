import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  InvalidLeaderElectionOptionError,
  type LeaseRecord,
  LeadershipHandoffSession,
  LeadershipTransferError,
  LeaderTermLifetime,
} from 'nest-leader';
import { ManualClock, MemoryLock, RecordingLogger } from 'nest-leader/testing';

const LEASE_DURATION_MS = 15_000;
const RENEW_DEADLINE_MS = 10_000;

/** A leader 'a' at leaseTransitions 3 on a MemoryLock, and a session for it. */
function leader() {
  const clock = new ManualClock();
  const logger = new RecordingLogger();
  const lock = new MemoryLock({ name: 'test' });
  lock.set({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 3 });
  const events: string[] = [];
  const active = new LeaderTermLifetime({
    leaseTransitions: 3,
    acquiredAt: clock.wallNow(),
    startedMs: clock.nowMs(),
    renewDeadlineMs: RENEW_DEADLINE_MS,
    clock,
    onRenewDeadlineExceeded: () => undefined,
    onEnded: (reason) => events.push(`ended ${reason}`),
  });
  const session = new LeadershipHandoffSession(
    {
      identity: 'a',
      clock,
      logger,
      leaseDurationMs: LEASE_DURATION_MS,
      renewDeadlineMs: RENEW_DEADLINE_MS,
      advertisement: undefined,
      yieldToHigherPriority: false,
      yieldToNewerTemplate: false,
      newerTemplateSettleMs: 30_000,
    },
    {
      lock: lock.description,
      get: (signal) => lock.get(signal),
      update: (record, version, signal) => lock.update(record, version, signal),
      observe: (current) => events.push(`observed ${current.record.holderIdentity}`),
      now: () => clock.wallNow(),
      nextTransitions: (value) => value + 1,
      finish: (record) => ({ ...record, scheduleLedger: 'stamped' }),
      endTerm: async () => {
        events.push(`drained, holding ${!active.holding.aborted}`);
      },
    },
    undefined, // no offers: the direct handoff, as on a lock without a place for them
  );
  return { clock, logger, lock, events, active, session };
}

const handedTo = (
  to: string,
  leaseTransitions: number,
  marker = leaseTransitions,
): LeaseRecord => ({
  holderIdentity: to,
  leaseDurationSeconds: 15,
  leaseTransitions,
  handoff: { to, leaseTransitions: marker },
});

describe('LeadershipHandoffSession', () => {
  test('a transfer ends the term, drains it while still holding, then writes the finished handoff record', async () => {
    const { lock, logger, events, active, session } = leader();

    await session.transfer('b', { leaseDurationSeconds: 5 }, () => active);

    assert.deepEqual(events, [
      'ended handed-off',
      'drained, holding true',
      'observed a',
      'observed b',
    ]);
    assert.equal(active.holding.aborted, true, 'no longer renewed');
    const { record } = lock.read()!;
    assert.equal(record.holderIdentity, 'b');
    assert.equal(record.leaseTransitions, 4);
    assert.equal(record.leaseDurationSeconds, 5);
    assert.deepEqual(record.handoff, { to: 'b', leaseTransitions: 4 });
    assert.equal(record.scheduleLedger, 'stamped');
    assert.equal(logger.matching('info', /"a" handed MemoryLock test to "b".*after 5 s/).length, 1);
  });

  test('without a live term it throws not-leader synchronously, asking only once the arguments are valid', () => {
    const { session } = leader();
    let asked = 0;
    const notLeading = () => {
      asked++;
      return undefined;
    };

    assert.throws(() => session.transfer('a', {}, notLeading), InvalidLeaderElectionOptionError);
    assert.throws(
      () => session.transfer('b', { leaseDurationSeconds: 0.5 }, notLeading),
      InvalidLeaderElectionOptionError,
    );
    assert.equal(asked, 0);
    assert.throws(
      () => session.transfer('b', {}, notLeading),
      (error: unknown) => error instanceof LeadershipTransferError && error.reason === 'not-leader',
    );
    assert.equal(asked, 1);
  });

  test('a second transfer while one is under way is refused; settled is set until the first is answered', async () => {
    const { active, session } = leader();

    const first = session.transfer('b', {}, () => active);
    assert.notEqual(session.settled, undefined);
    assert.throws(
      () => session.transfer('c', {}, () => active),
      (error: unknown) => error instanceof LeadershipTransferError && error.reason === 'not-leader',
    );
    await first;

    assert.equal(session.settled, undefined);
  });

  test('a failed transfer rejects, while settled resolves (the run loop never sees the error)', async () => {
    const { lock, active, session } = leader();
    lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 4 });

    const done = session.transfer('b', {}, () => active);
    const settled = session.settled!;

    await assert.rejects(
      done,
      (error: unknown) => error instanceof LeadershipTransferError && error.reason === 'lease-lost',
    );
    assert.equal(await settled, undefined);
  });

  test('a record handed to this candidate is accepted, with a line saying so; others are not', () => {
    const { logger, session } = leader();

    assert.equal(session.accepts(handedTo('b', 4)), false, 'handed to another');
    assert.equal(session.accepts(handedTo('a', 5, 4)), false, 'a stale marker');
    assert.equal(
      session.accepts({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 4 }),
      false,
    );
    assert.equal(logger.lines.length, 0);

    assert.equal(session.accepts(handedTo('a', 4)), true);
    assert.equal(logger.matching('info', /was handed to this candidate "a" \(term 4\)/).length, 1);
  });

  test('handedToUs recognises a handoff without saying anything', () => {
    const { logger, session } = leader();

    assert.equal(session.handedToUs(handedTo('a', 4)), true);
    assert.equal(session.handedToUs(handedTo('a', 5, 4)), false);
    assert.equal(logger.lines.length, 0);
  });
});
