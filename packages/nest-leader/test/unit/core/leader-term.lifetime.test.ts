import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LeaderTermEndedError, type LeaderTermEndReason } from 'nest-leader';
import { LeaderTermLifetime } from '../../../dist/esm/core/leader-term.js';
import { ManualClock } from 'nest-leader/testing';

const RENEW_DEADLINE_MS = 10_000;

function lifetime(clock: ManualClock) {
  const events: string[] = [];
  const ends: { reason: LeaderTermEndReason; durationMs: number }[] = [];
  const term = new LeaderTermLifetime({
    leaseTransitions: 7,
    acquiredAt: new Date('2026-01-01T00:00:00Z'),
    startedMs: clock.nowMs(),
    renewDeadlineMs: RENEW_DEADLINE_MS,
    clock,
    onRenewDeadlineExceeded: () => events.push('deadline'),
    onEnded: (reason, durationMs) => {
      events.push(`ended ${reason}`);
      ends.push({ reason, durationMs });
    },
  });
  return { term, events, ends };
}

describe('LeaderTermLifetime', () => {
  test('a new term is live and carries its fencing token and acquire time', () => {
    const clock = new ManualClock();
    const { term } = lifetime(clock);

    assert.equal(term.isLive(), true);
    assert.equal(term.term.leaseTransitions, 7);
    assert.equal(term.term.acquiredAt.toISOString(), '2026-01-01T00:00:00.000Z');
    assert.equal(term.term.signal.aborted, false);
    assert.equal(term.endReason, undefined);
  });

  test('the step-down timer ends the term at the renew deadline and stops renewing', async () => {
    const clock = new ManualClock();
    const { term, events, ends } = lifetime(clock);

    await clock.advance(RENEW_DEADLINE_MS - 1);
    assert.equal(term.isLive(), true);
    await clock.advance(1);

    assert.deepEqual(events, ['deadline', 'ended renew-deadline-exceeded']);
    assert.deepEqual(ends, [{ reason: 'renew-deadline-exceeded', durationMs: RENEW_DEADLINE_MS }]);
    assert.equal(term.holding.aborted, true, 'the Lease is no longer renewed');
    assert.equal(term.endReason, 'renew-deadline-exceeded');
  });

  test('after a pause past the deadline, reading signal.aborted ends the term before any timer runs', () => {
    const clock = new ManualClock();
    const { term, events } = lifetime(clock);

    clock.jump(RENEW_DEADLINE_MS + 5_000); // SIGSTOP: no timer fires

    assert.equal(term.term.signal.aborted, true);
    assert.deepEqual(events, ['deadline', 'ended renew-deadline-exceeded']);
    const reason: unknown = term.term.signal.reason;
    assert.ok(reason instanceof LeaderTermEndedError);
    assert.equal(reason.reason, 'renew-deadline-exceeded');
    assert.equal(reason.leaseTransitions, 7);
  });

  test('throwIfEnded() and signal.throwIfAborted() re-check the deadline at call time', () => {
    const clock = new ManualClock();
    const { term } = lifetime(clock);
    term.term.throwIfEnded();
    term.term.signal.throwIfAborted();

    clock.jump(RENEW_DEADLINE_MS);

    assert.throws(() => term.term.throwIfEnded(), LeaderTermEndedError);
    assert.throws(() => term.term.signal.throwIfAborted(), LeaderTermEndedError);
  });

  test('a renewal moves the deadline to renewDeadline after the start of its write', async () => {
    const clock = new ManualClock();
    const { term, events } = lifetime(clock);

    await clock.advance(6_000);
    term.renewed(4_000); // the write was sent at 4 s, answered at 6 s
    assert.equal(term.lastRenewStartMs, 4_000);
    await clock.advance(7_999); // 13.999 s
    assert.equal(term.isLive(), true);
    await clock.advance(1); // 14 s = 4 s + renewDeadline

    assert.equal(term.isLive(), false);
    assert.deepEqual(events, ['deadline', 'ended renew-deadline-exceeded']);
  });

  test('a renewal whose write started before the last one does not move the deadline back', () => {
    const clock = new ManualClock();
    const { term } = lifetime(clock);

    term.renewed(5_000);
    term.renewed(3_000);

    assert.equal(term.lastRenewStartMs, 5_000);
  });

  test('end() ends the term for the work but keeps renewing; lose() also stops renewing', () => {
    const clock = new ManualClock();
    const { term, ends } = lifetime(clock);

    term.end('stopped');
    assert.equal(term.term.signal.aborted, true);
    assert.equal(term.holding.aborted, false, 'the Lease is still renewed while work drains');

    term.lose('lease-taken-over');
    assert.equal(term.holding.aborted, true);
    assert.deepEqual(ends, [{ reason: 'stopped', durationMs: 0 }], 'reported once, first reason');
    assert.equal(term.endReason, 'stopped');
  });

  test('an ended term cancels its step-down timer', async () => {
    const clock = new ManualClock();
    const { term, events } = lifetime(clock);

    term.end('stopped');
    await clock.advance(RENEW_DEADLINE_MS * 2);

    assert.deepEqual(events, ['ended stopped'], 'no step-down after the end');
    assert.equal(clock.pendingTimers, 0);
  });
});
