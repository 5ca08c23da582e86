import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { candidate, s, world } from './elector.fixture.js';

describe('LeaderElector: callbacks, terms and losing', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  before(() => process.on('unhandledRejection', onUnhandled));
  after(() => process.off('unhandledRejection', onUnhandled));

  test('onNewLeader fires whenever the observed holder changes, including to ourselves', async () => {
    const w = world();
    const b = candidate('b', w);
    const a = candidate('a', w);
    b.elector.start();
    await w.clock.advance(0);
    a.elector.start();
    await w.clock.advance(s(4));

    await b.elector.stop();
    await w.clock.advance(s(2));

    assert.deepEqual(a.log.newLeaders, ['b', 'a']);
    assert.deepEqual(b.log.newLeaders, ['b']);
    assert.equal(a.elector.leader, 'a');
    await a.elector.stop();
  });

  test('exceptions thrown by callbacks are logged and never break the election', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w, {
      callbacks: {
        onStartedLeading: () => {
          throw new Error('boom on start');
        },
        onStoppedLeading: () => Promise.reject(new Error('boom on stop')),
        onNewLeader: () => {
          throw new Error('boom on new leader');
        },
      },
    });
    elector.start();
    await w.clock.advance(s(6));
    assert.equal(elector.isLeader(), true);

    await elector.stop();

    assert.equal(logger.matching('error', 'boom on start').length, 1);
    assert.equal(logger.matching('error', 'boom on new leader').length, 1);
    assert.equal(logger.matching('error', 'boom on stop').length, 1);
    assert.equal(w.lock.read()!.record.holderIdentity, '');
    assert.deepEqual(unhandled, []);
  });

  test('a rejected promise returned by onStartedLeading is logged, not left unhandled', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w, {
      callbacks: {
        onStartedLeading: (() => Promise.reject(new Error('async boom'))) as () => void,
      },
    });
    elector.start();
    await w.clock.advance(0);

    assert.equal(logger.matching('error', 'async boom').length, 1);
    assert.deepEqual(unhandled, []);
    await elector.stop();
  });

  test('the term signal is aborted before onStoppedLeading runs', async () => {
    const w = world();
    const seen: unknown[] = [];
    const { elector } = candidate('a', w, {
      callbacks: {
        onStoppedLeading: (term) => void seen.push(term.signal.aborted, elector.isLeader()),
      },
    });
    elector.start();
    await w.clock.advance(0);

    await elector.stop();

    assert.deepEqual(seen, [true, false]);
  });

  test("after a loss, onLost 'recampaign' starts a new term with a fresh signal", async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);
    w.lock.failNext('any', new Error('503'), 1000);
    await w.clock.advance(s(10));
    assert.equal(elector.isLeader(), false);

    w.lock.clearFaults();
    await w.clock.advance(s(3));

    assert.deepEqual(log.events, ['started 0', 'stopped 0', 'started 1']);
    assert.notEqual(log.terms[1]!.signal, log.terms[0]!.signal);
    assert.equal(log.terms[0]!.signal.aborted, true);
    assert.equal(log.terms[1]!.signal.aborted, false);
    assert.equal(elector.term, log.terms[1]);
    await elector.stop();
  });

  test('re-campaigning waits until onStoppedLeading has settled', async () => {
    const w = world();
    let finishDrain!: () => void;
    const { elector } = candidate('a', w, {
      callbacks: {
        onStoppedLeading: (term) =>
          term.leaseTransitions === 0 ? new Promise<void>((r) => (finishDrain = r)) : undefined,
      },
    });
    elector.start();
    await w.clock.advance(0);
    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 5 });
    await w.clock.advance(s(2));
    const getsWhileDraining = w.lock.calls.get;

    await w.clock.advance(s(20));
    assert.equal(w.lock.calls.get, getsWhileDraining);

    finishDrain();
    await w.clock.advance(s(2));
    assert.ok(w.lock.calls.get > getsWhileDraining);
    await elector.stop();
  });

  test("after a loss, onLost 'stop' stops campaigning", async () => {
    const w = world();
    const { elector, log, logger } = candidate('a', w, { onLost: 'stop' });
    elector.start();
    await w.clock.advance(0);
    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 5 });
    await w.clock.advance(s(2));
    const calls = { ...w.lock.calls };

    await w.clock.advance(s(60));

    assert.deepEqual(w.lock.calls, calls);
    assert.deepEqual(log.events, ['started 0', 'stopped 0']);
    assert.equal(logger.matching('warn', "onLost: 'stop'").length, 1);
    await elector.stop();
  });

  test('term and leader getters reflect the current state', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    const state = (): unknown[] => [elector.leader, elector.term?.leaseTransitions, elector.term];
    assert.deepEqual(state(), [undefined, undefined, undefined]);
    assert.equal(elector.identity, 'a');

    elector.start();
    await w.clock.advance(0);
    assert.deepEqual(state(), ['a', 0, log.terms[0]]);

    await elector.stop();
    assert.deepEqual(state(), [undefined, undefined, undefined]);
  });

  test('a follower reports the leaseTransitions of the Lease it observes', async () => {
    const w = world();
    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 7 });
    const { elector } = candidate('a', w);
    assert.equal(elector.leaseTransitions, undefined);

    elector.start();
    await w.clock.advance(0);

    assert.equal(elector.isLeader(), false);
    assert.equal(elector.leader, 'x');
    assert.equal(elector.leaseTransitions, 7);
    await elector.stop();
  });
});
