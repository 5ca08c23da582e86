import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ElectionObserver, LeaderCallbacks, LeaderTerm } from 'nest-leader';
import { ElectionNotifier } from '../../../dist/esm/core/election/election-notifier.js';
import { RecordingLogger } from 'nest-leader/testing';

const term: LeaderTerm = Object.freeze({
  leaseTransitions: 4,
  acquiredAt: new Date('2026-01-01T00:00:00Z'),
  signal: new AbortController().signal,
  isLive: () => true,
  throwIfEnded: () => undefined,
});

function notifier(observer: ElectionObserver | undefined, callbacks: LeaderCallbacks = {}) {
  const logger = new RecordingLogger();
  const events = new ElectionNotifier({
    name: 'billing',
    identity: 'pod-a',
    lock: { description: 'Lease default/billing' },
    observer,
    callbacks,
    logger,
    renewDeadlineMs: 10_000,
  });
  return { events, logger };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ElectionNotifier', () => {
  test('a new term is logged, observed, then passed to onStartedLeading, in that order', () => {
    const order: string[] = [];
    const { events, logger } = notifier(
      {
        termStarted: (e) =>
          order.push(`observer ${e.election} ${e.identity} ${e.term.leaseTransitions} ${e.reason}`),
      },
      { onStartedLeading: (t) => order.push(`callback ${t.leaseTransitions}`) },
    );

    events.startedLeading(term, 'expired');

    assert.equal(logger.matching('info', '"pod-a"').length, 1);
    assert.deepEqual(order, ['observer billing pod-a 4 expired', 'callback 4']);
  });

  test('an observer that throws never breaks the election', () => {
    const { events } = notifier({
      termStarted: () => {
        throw new Error('observer bug');
      },
      lockRequest: () => {
        throw new Error('observer bug');
      },
    });

    assert.doesNotThrow(() => events.startedLeading(term, 'expired'));
    assert.doesNotThrow(() => events.lockRequest('get', 'success', 3));
  });

  test('a callback that throws or rejects is logged as an error, never rethrown', async () => {
    const { events, logger } = notifier(undefined, {
      onStartedLeading: () => {
        throw new Error('boom');
      },
      onNewLeader: () => Promise.reject(new Error('later boom')),
    });

    events.startedLeading(term, 'expired');
    events.leaderChanged('pod-b', 5);
    await flush();

    assert.equal(logger.matching('error', 'onStartedLeading').length, 1);
    assert.equal(logger.matching('error', 'onNewLeader').length, 1);
  });

  test('stoppedLeading() logs the reason and awaits onStoppedLeading; a rejection is logged', async () => {
    let drained = false;
    const { events, logger } = notifier(undefined, {
      onStoppedLeading: async () => {
        await flush();
        drained = true;
        throw new Error('drain failed');
      },
    });

    await events.stoppedLeading(term, 'lease-taken-over');

    assert.equal(drained, true);
    assert.equal(logger.matching('info', 'lease-taken-over').length, 1);
    assert.equal(logger.matching('error', 'onStoppedLeading').length, 1);
  });

  test('a released Lease is observed as holder "" but is not a new leader', () => {
    const seen: string[] = [];
    const { events, logger } = notifier(
      { leaderObserved: (e) => seen.push(`observed "${e.holderIdentity}" ${e.leaseTransitions}`) },
      { onNewLeader: (identity) => seen.push(`new leader ${identity}`) },
    );

    events.leaderChanged('', 4);
    events.leaderChanged('pod-b', 5);

    assert.deepEqual(seen, ['observed "" 4', 'observed "pod-b" 5', 'new leader pod-b']);
    assert.equal(logger.matching('info', 'New leader').length, 1);
  });

  test('this candidate as the new leader: onNewLeader is called, the line is at debug level (its started-leading line tells the change)', () => {
    const seen: string[] = [];
    const { events, logger } = notifier(undefined, {
      onNewLeader: (identity) => seen.push(identity),
    });

    events.leaderChanged('pod-a', 5);

    assert.deepEqual(seen, ['pod-a']);
    assert.deepEqual(logger.matching('info', 'New leader'), []);
    assert.deepEqual(logger.matching('debug', 'New leader'), [
      'New leader of Lease default/billing: "pod-a".',
    ]);
  });

  test('every observation carries a fresh event naming the election and the candidate', () => {
    const events: object[] = [];
    const { events: notifierEvents } = notifier({
      renewSlowPath: (e) => events.push(e),
      renewed: (e) => events.push(e),
    });

    notifierEvents.renewSlowPath();
    notifierEvents.renewed(term);

    assert.deepEqual(events[0], { election: 'billing', identity: 'pod-a' });
    assert.deepEqual(events[1], { election: 'billing', identity: 'pod-a', term });
    assert.notEqual(events[0], events[1]);
  });

  test('the renew deadline line names the lock and the deadline', () => {
    const { events, logger } = notifier(undefined);

    events.renewDeadlineExceeded();

    assert.equal(logger.matching('warn', 'Lease default/billing').length, 1);
  });
});
