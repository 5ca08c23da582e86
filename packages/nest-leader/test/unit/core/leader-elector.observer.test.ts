import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LockConflictError } from 'nest-leader';
import { candidate, RecordingObserver, s, settle, world } from './elector.fixture.js';

describe('LeaderElector: observer (as client-go metrics provider)', () => {
  test('reports terms, renewals, the slow path, every lock request and holder changes', async () => {
    const w = world();
    const oa = new RecordingObserver();
    const ob = new RecordingObserver();
    const a = candidate('a', w, { observer: oa, name: 'billing' });
    const b = candidate('b', w, { observer: ob });
    a.elector.start();
    await w.clock.advance(0);
    b.elector.start();
    await w.clock.advance(s(4)); // a renews at 2 s and 4 s on the fast path
    w.lock.failNext('update', new LockConflictError(w.lock.description, 'update'));
    await w.clock.advance(s(2)); // 6 s: fast path conflicts → GET + update
    await a.elector.stop(); // releases: b sees '' then takes over
    await w.clock.advance(s(3));

    // Every event names the election and the candidate.
    for (const call of oa.calls) {
      assert.equal(call.event.election, 'billing');
      assert.equal(call.event.identity, 'a');
    }
    assert.equal(ob.calls[0]!.event.election, 'MemoryLock test', 'default name: the lock');

    const started = oa.of('termStarted');
    assert.equal(started.length, 1);
    assert.equal((started[0]!.term as { leaseTransitions: number }).leaseTransitions, 0);
    assert.equal(oa.of('renewed').length, 3);
    assert.equal(oa.of('renewSlowPath').length, 1);
    const ended = oa.of('termEnded');
    assert.equal(ended.length, 1);
    assert.equal(ended[0]!.reason, 'stopped');
    assert.equal(ended[0]!.durationMs, s(6));

    // One lockRequest per call of the lock, with verb and outcome.
    const requests = oa.of('lockRequest').map((e) => `${e.operation}:${e.outcome}`);
    assert.deepEqual(requests, [
      'get:not-found',
      'create:success',
      'update:success',
      'update:success',
      'update:conflict',
      'get:success',
      'update:success',
      'get:success', // release: re-read
      'update:success', // release: clear the holder
    ]);
    const bRequests = ob.of('lockRequest');
    const bCalls = w.lock.calls.get + w.lock.calls.create + w.lock.calls.update;
    assert.equal(requests.length + bRequests.length, bCalls, 'every lock call is reported');
    for (const e of [...oa.of('lockRequest'), ...bRequests]) assert.equal(e.durationMs, 0);

    // Holder changes, including the release to ''.
    assert.deepEqual(
      ob.of('leaderObserved').map((e) => `${e.holderIdentity}@${e.leaseTransitions}`),
      ['a@0', '@0', 'b@1'],
    );
    assert.deepEqual(
      oa.of('leaderObserved').map((e) => e.holderIdentity),
      ['a', ''],
    );
    assert.equal(ob.of('termStarted').length, 1);
    await b.elector.stop();
  });

  test('each term start carries why the Lease came: created, release, handoff, expired', async () => {
    const w = world();
    const observers = { a: new RecordingObserver(), b: new RecordingObserver() };
    const c = new RecordingObserver();
    const a = candidate('a', w, { observer: observers.a });
    const b = candidate('b', w, { observer: observers.b });
    a.elector.start();
    await w.clock.advance(0); // a creates the Lease
    b.elector.start();
    await w.clock.advance(s(1));
    await a.elector.stop(); // releases: b takes the released Lease
    await w.clock.advance(s(3));
    assert.equal(b.elector.isLeader(), true);
    const cc = candidate('c', w, { observer: c });
    cc.elector.start();
    await w.clock.advance(s(1));
    await settle(w, b.elector.transferLeadership('c')); // c accepts, takes the handed-off Lease
    await w.clock.advance(s(3));
    assert.equal(cc.elector.isLeader(), true);
    w.lock.set({ ...w.lock.read()!.record, holderIdentity: 'gone' }); // a holder that dies
    await w.clock.advance(s(2));
    assert.equal(cc.elector.isLeader(), false);
    await w.clock.advance(s(17)); // gone's record expires by b's and c's observation

    const reasons = (o: RecordingObserver) => o.of('termStarted').map((e) => e.reason);
    assert.deepEqual(reasons(observers.a), ['created']);
    assert.deepEqual(reasons(observers.b), [
      'release',
      ...(b.elector.isLeader() ? ['expired'] : []),
    ]);
    assert.deepEqual(reasons(c), ['handoff', ...(cc.elector.isLeader() ? ['expired'] : [])]);
    assert.equal(b.elector.isLeader() || cc.elector.isLeader(), true, 'one took the expired Lease');
    await Promise.all([b.elector.stop(), cc.elector.stop()]);
  });

  test('a request timeout and a renew-deadline step-down are reported as such', async () => {
    const w = world();
    const o = new RecordingObserver();
    const { elector } = candidate('a', w, { observer: o });
    elector.start();
    await w.clock.advance(0);
    w.lock.hangNext('any', 1000);
    await w.clock.advance(s(10));

    const outcomes = o.of('lockRequest').map((e) => `${e.operation}:${e.outcome}:${e.durationMs}`);
    assert.ok(outcomes.includes('update:timeout:5000'), outcomes.join(' '));
    assert.equal(o.of('termEnded')[0]!.reason, 'renew-deadline-exceeded');
    w.lock.clearFaults();
    await elector.stop();
  });

  test('an observer that throws is ignored: the election goes on', async () => {
    const w = world();
    const explode = (): never => {
      throw new Error('observer exploded');
    };
    const observer = {
      termStarted: explode,
      termEnded: explode,
      renewed: explode,
      renewSlowPath: explode,
      lockRequest: explode,
      leaderObserved: explode,
    };
    const { elector, log, logger } = candidate('a', w, { observer });
    elector.start();
    await w.clock.advance(s(6));

    assert.equal(elector.isLeader(), true);
    assert.equal(log.terms.length, 1);
    assert.deepEqual(logger.matching('error', ''), []);
    await elector.stop();
    assert.equal(w.lock.read()!.record.holderIdentity, '');
  });
});
