import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LeaseApiError } from 'nest-leader';
import { candidate, leaderAndFollower, s, world } from './elector.fixture.js';

const notFound = (): LeaseApiError =>
  new LeaseApiError({
    kind: 'not-found',
    verb: 'update',
    name: 'test',
    namespace: 'default',
    statusCode: 404,
  });

describe('LeaderElector: a Lease deleted under a live leader', () => {
  test('a follower that saw a holder does not create the Lease before leaseDuration has passed', async () => {
    const w = world();
    const { a, b } = await leaderAndFollower(w, { releaseOnStop: false });
    // a stops renewing at 1 s (as if it crashed): b saw its record last change at 0 s.
    await a.elector.stop();
    await w.clock.advance(s(2));
    w.lock.delete();

    await w.clock.advance(s(10));
    assert.equal(w.lock.read(), undefined, 'nobody recreated the Lease early');
    assert.equal(b.elector.isLeader(), false);
    assert.equal(
      b.logger.matching('info', 'does not exist, but it was last seen held by "a"').length,
      1,
    );

    await w.clock.advance(s(8));
    assert.equal(b.elector.isLeader(), true);
    await b.elector.stop();
  });

  test('the recreated Lease continues from the highest leaseTransitions seen, +1', async () => {
    const w = world();
    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 41 });
    const { elector, log } = candidate('b', w);
    elector.start();
    await w.clock.advance(0);
    w.lock.delete();

    // leaseDuration after it found the Lease missing (its first attempt after the deletion).
    await w.clock.advance(s(18));

    assert.equal(elector.isLeader(), true);
    assert.deepEqual(log.events, ['started 42']);
    assert.equal(w.lock.read()!.record.leaseTransitions, 42);
    await elector.stop();
  });

  test('deleted under a live leader: never two leaders, tokens strictly increase', async () => {
    const w = world();
    const { a, b } = await leaderAndFollower(w);
    const c = candidate('c', w);
    c.elector.start();
    await w.clock.advance(s(1)); // c has seen a's record too
    const tokens: number[] = [];
    const all = [a, b, c];
    for (let round = 0; round < 3; round++) {
      w.lock.delete();
      for (let t = 0; t < s(40); t += 100) {
        await w.clock.advance(100);
        const leaders = all.filter((x) => x.elector.isLeader());
        assert.ok(leaders.length <= 1, `two leaders at ${w.clock.nowMs()} ms`);
      }
    }
    for (const x of all) tokens.push(...x.log.terms.map((term) => term.leaseTransitions));
    const startedInOrder = all
      .flatMap((x) => x.log.terms)
      .map((term) => term.leaseTransitions)
      .sort((p, q) => p - q);
    assert.equal(new Set(startedInOrder).size, startedInOrder.length, `tokens repeat: ${tokens}`);
    assert.ok(startedInOrder.length >= 4, 'a new term after each deletion');
    for (const x of all) await x.elector.stop();
  });

  test('the leader steps down at once when its fast-path update answers 404, without a GET', async () => {
    const w = world();
    const { elector, log, logger } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.delete();
    w.lock.failNext('update', notFound());
    await w.clock.advance(s(2));

    assert.equal(elector.isLeader(), false);
    assert.equal(log.terms[0]!.signal.reason.reason, 'lease-deleted');
    assert.deepEqual(logger.matching('warn', 'update of'), [], 'not a failure to retry');
    assert.equal(logger.matching('warn', 'was deleted while this candidate led it').length, 1);
    await elector.stop();
  });

  test('the leader steps down at once when the slow path reads 404', async () => {
    const w = world();
    const { elector, log, logger } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    w.lock.delete();
    await w.clock.advance(s(2));

    assert.equal(elector.isLeader(), false);
    assert.equal(log.terms[0]!.signal.reason.reason, 'lease-deleted');
    assert.equal(logger.matching('warn', 'was deleted while this candidate led it').length, 1);
    await elector.stop();
  });

  test('the old leader itself recreates the Lease only after leaseDuration, with a new term', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(s(4)); // renewed at 2 s and 4 s

    w.lock.delete(); // found missing at the renewal at 6 s: not recreated before 21 s
    await w.clock.advance(s(17) - 1);
    assert.deepEqual(log.events, ['started 0', 'stopped 0']);
    assert.equal(w.lock.read(), undefined);

    await w.clock.advance(s(2));
    assert.deepEqual(log.events, ['started 0', 'stopped 0', 'started 1']);
    assert.equal(elector.isLeader(), true);
    await elector.stop();
  });

  test('a candidate that never saw the Lease creates it at once at 0 (as client-go)', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);
    assert.deepEqual(log.events, ['started 0']);
    await elector.stop();
  });

  test('a Lease released (holder empty) and then deleted is recreated leaseDuration after it went missing, +1', async () => {
    // Its last sighting (a free Lease) may be stale: someone may have taken it since, unseen.
    const w = world();
    w.lock.set({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 7 });
    const { elector, log } = candidate('a', w);
    // The first read sees the free Lease; the write fails; then the Lease vanishes.
    w.lock.failNext('update', new Error('connection reset'));
    elector.start();
    await w.clock.advance(0);
    w.lock.delete();
    await w.clock.advance(s(14));
    assert.deepEqual(log.events, []);

    await w.clock.advance(s(4));
    assert.deepEqual(log.events, ['started 8']);
    await elector.stop();
  });
});
