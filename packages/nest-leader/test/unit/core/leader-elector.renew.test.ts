import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LeaderTermEndedError, LockConflictError } from 'nest-leader';
import { candidate, s, world } from './elector.fixture.js';

describe('LeaderElector: renewing and stepping down', () => {
  test('renews every retryPeriod with the cached version, without a GET', async () => {
    const w = world();
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);
    const getsAfterAcquire = w.lock.calls.get;

    await w.clock.advance(s(12));

    assert.equal(w.lock.calls.update, 6);
    assert.equal(w.lock.calls.get, getsAfterAcquire);
    assert.equal(elector.isLeader(), true);
    await elector.stop();
  });

  test('a renewal keeps acquireTime and leaseTransitions and moves renewTime', async () => {
    const w = world();
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);
    const acquiredAt = w.clock.wallNow();

    await w.clock.advance(s(4));

    const { record } = w.lock.read()!;
    assert.deepEqual(record.acquireTime, acquiredAt);
    assert.deepEqual(record.renewTime, w.clock.wallNow());
    assert.equal(record.leaseTransitions, 0);
    assert.deepEqual(elector.term?.acquiredAt, acquiredAt);
    await elector.stop();
  });

  test('falls back to GET + update when the fast-path update fails', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.failNext('update', new Error('connection reset'));
    await w.clock.advance(s(2));

    assert.equal(w.lock.calls.get, 2);
    assert.equal(w.lock.calls.update, 2);
    assert.deepEqual(w.lock.read()!.record.renewTime, w.clock.wallNow());
    assert.equal(elector.isLeader(), true);
    assert.equal(log.terms.length, 1);
    await elector.stop();
  });

  test('a term ended by stop() is not live any more', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);
    await elector.stop();
    assert.equal(log.terms[0]!.isLive(), false);
    assert.throws(() => log.terms[0]!.throwIfEnded(), /ended: the elector was stopped/);
  });

  test('keeps leading when someone else rewrote the Lease without changing its holder', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.set(w.lock.read()!.record);
    await w.clock.advance(s(2));

    assert.equal(elector.isLeader(), true);
    assert.equal(log.terms[0]!.signal.aborted, false);
    await elector.stop();
  });

  test('steps down at renewDeadline when requests hang, by a local timer', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.hangNext('any', 1000);
    await w.clock.advance(s(10) - 1);
    assert.equal(elector.isLeader(), true);

    await w.clock.advance(1);
    assert.equal(elector.isLeader(), false);
    const term = log.terms[0]!;
    assert.equal(term.signal.aborted, true);
    assert.ok(term.signal.reason instanceof LeaderTermEndedError);
    assert.equal(term.signal.reason.reason, 'renew-deadline-exceeded');
    assert.deepEqual(log.events, ['started 0', 'stopped 0']);
    w.lock.clearFaults();
    await elector.stop();
  });

  test('steps down at renewDeadline when every renewal fails', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.failNext('any', new Error('503 Service Unavailable'), 1000);
    await w.clock.advance(s(10) - 1);
    assert.equal(elector.isLeader(), true);
    await w.clock.advance(1);

    assert.equal(elector.isLeader(), false);
    assert.equal(logger.matching('warn', 'not renewed within renewDeadline').length, 1);
    await elector.stop();
  });

  test('a renewal that succeeds before the deadline keeps the same term', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.failNext('any', new Error('503'), 6);
    await w.clock.advance(s(30));

    assert.equal(elector.isLeader(), true);
    assert.equal(log.terms.length, 1);
    assert.equal(log.terms[0]!.signal.aborted, false);
    await elector.stop();
  });

  test('isLeader() is false past the deadline even if no timer ran (paused process)', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.clock.jump(s(10));

    assert.equal(elector.isLeader(), false);
    assert.equal(elector.term, undefined);
    assert.equal(log.terms[0]!.signal.aborted, true);
    await elector.stop();
  });

  test('term.isLive() and throwIfEnded() re-check the deadline when called after a pause', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);
    const term = log.terms[0]!;
    assert.equal(term.isLive(), true);
    assert.doesNotThrow(() => term.throwIfEnded());

    w.clock.jump(s(10)); // paused past renewDeadline: no timer has run yet

    assert.equal(term.isLive(), false);
    assert.throws(
      () => term.throwIfEnded(),
      (e: unknown) => e instanceof LeaderTermEndedError && e.reason === 'renew-deadline-exceeded',
    );
    await elector.stop();
  });

  test('term.signal.aborted reads true after a pause past the deadline, before any timer ran', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);
    const { signal } = log.terms[0]!;
    let abortEvents = 0;
    signal.addEventListener('abort', () => abortEvents++);

    w.clock.jump(s(10));

    assert.equal(signal.aborted, true);
    assert.throws(() => signal.throwIfAborted(), LeaderTermEndedError);
    assert.equal(abortEvents, 1, 'listeners fired once, from the read');
    await w.clock.advance(0);
    assert.equal(abortEvents, 1);
    await elector.stop();
  });

  test('a pause shorter than renewDeadline does not end the term', async () => {
    const w = world();
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.clock.jump(s(9));

    assert.equal(elector.isLeader(), true);
    await w.clock.advance(0);
    assert.equal(elector.isLeader(), true);
    await elector.stop();
  });

  test('each request times out after max(1 s, renewDeadline / 2)', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w);
    w.lock.hangNext('get');

    elector.start();
    await w.clock.advance(s(5) - 1);
    assert.equal(logger.matching('warn', 'Timed out').length, 0);
    await w.clock.advance(1);
    assert.equal(logger.matching('warn', 'Timed out after 5000 ms').length, 1);
    await w.clock.advance(s(2));
    assert.equal(elector.isLeader(), true);
    await elector.stop();
  });

  test('the per-request timeout is at least 1 s', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w, {
      leaseDurationSeconds: 2,
      renewDeadlineSeconds: 1.5,
      retryPeriodSeconds: 0.5,
    });
    w.lock.hangNext('get');

    elector.start();
    await w.clock.advance(s(1));

    assert.equal(logger.matching('warn', 'Timed out after 1000 ms').length, 1);
    await elector.stop();
  });

  test('steps down at once when another candidate holds the Lease', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 9 });
    await w.clock.advance(s(2));

    assert.equal(elector.isLeader(), false);
    assert.equal(log.terms[0]!.signal.reason.reason, 'lease-taken-over');
    assert.deepEqual(log.newLeaders, ['a', 'x']);
    assert.equal(w.lock.read()!.record.holderIdentity, 'x');
    await elector.stop();
  });

  test('two processes with one identity: the first keeps leading, the second warns and waits', async () => {
    const w = world();
    const first = candidate('same', w);
    const second = candidate('same', w);
    first.elector.start();
    await w.clock.advance(0);

    second.elector.start();
    await w.clock.advance(s(2));

    assert.equal(first.elector.isLeader(), true);
    assert.equal(second.elector.isLeader(), false);
    await w.clock.advance(s(60));
    assert.equal(first.elector.isLeader(), true);
    assert.equal(second.elector.isLeader(), false);
    assert.deepEqual(second.log.events, []);
    assert.equal(second.logger.matching('warn', 'uses the same identity').length, 1);
    assert.deepEqual(first.log.events, ['started 0']);

    // The first stops without releasing (a crash): the second takes over once it expired.
    await first.elector.stop();
    await w.clock.advance(s(17));
    assert.equal(second.elector.isLeader(), true);
    assert.deepEqual(second.log.events, ['started 1']);
    await second.elector.stop();
  });

  test('a conflict on renewal is not logged as a failure', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.failNext('update', new LockConflictError(w.lock.description, 'update'));
    await w.clock.advance(s(2));

    assert.equal(logger.matching('warn', 'failed').length, 0);
    assert.equal(logger.matching('debug', 'stale version').length, 1);
    await elector.stop();
  });
});
