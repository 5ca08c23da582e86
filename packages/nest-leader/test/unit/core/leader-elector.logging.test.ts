import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LeaseApiError } from 'nest-leader';
import { candidate, s, world } from './elector.fixture.js';

describe('LeaderElector: logging failures', () => {
  test('a persistent transient failure is logged once, then once per 30 s with a count', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w);
    w.lock.failNext('any', new Error('connect ECONNREFUSED 10.0.0.1:443'), 1000);

    elector.start();
    await w.clock.advance(s(61));

    const lines = logger.matching('warn', 'ECONNREFUSED');
    assert.equal(lines.length, 3);
    assert.doesNotMatch(lines[0]!, /repeated/);
    assert.match(lines[1]!, /repeated 15 times in the last 30s/);
    assert.match(lines[2]!, /repeated 15 times in the last 30s/);
    await elector.stop();
  });

  test('recovery is logged once with the number of failed attempts', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w);
    w.lock.failNext('get', new Error('socket hang up'), 3);

    elector.start();
    await w.clock.advance(s(10));

    assert.equal(elector.isLeader(), true);
    assert.deepEqual(logger.matching('info', 'reachable again'), [
      'MemoryLock test reachable again after 3 failed attempt(s).',
    ]);
    await elector.stop();
  });

  test('RBAC denial is logged at error level with what to grant', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w);
    const forbidden = new LeaseApiError({
      kind: 'forbidden',
      verb: 'get',
      name: 'billing-worker',
      namespace: 'prod',
      statusCode: 403,
    });
    w.lock.failNext('get', forbidden, 1000);

    elector.start();
    await w.clock.advance(s(20));

    const lines = logger.matching('error', 'forbidden (HTTP 403)');
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /get, create and update on leases\.coordination\.k8s\.io/);
    await elector.stop();
  });

  test('403s for a few seconds after working credentials (API server restart) are warnings', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w);
    elector.start();
    await w.clock.advance(s(4)); // created, then renewed (updated) twice
    const forbidden = new LeaseApiError({
      kind: 'forbidden',
      verb: 'update',
      name: 'test',
      namespace: 'default',
      statusCode: 403,
    });

    w.lock.failNext('any', forbidden, 4); // ≈ 4 s of 403s, as while the RBAC cache syncs
    await w.clock.advance(s(8));

    assert.equal(elector.isLeader(), true);
    assert.deepEqual(logger.matching('error', ''), []);
    const warnings = logger.matching('warn', 'authorization cache');
    assert.ok(warnings.length >= 1 && warnings.length <= 2, warnings.join('\n')); // update, get
    for (const line of warnings) assert.doesNotMatch(line, /RBAC denies it/);
    await elector.stop();
  });

  test('403s that last past the grace period are errors with the RBAC hint', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w);
    elector.start();
    await w.clock.advance(s(4)); // get, update and create all worked
    const forbidden = new LeaseApiError({
      kind: 'forbidden',
      verb: 'get',
      name: 'test',
      namespace: 'default',
      statusCode: 403,
    });
    w.lock.failNext('any', forbidden, 1000);

    await w.clock.advance(s(9));
    assert.deepEqual(logger.matching('error', ''), []);
    await w.clock.advance(s(5)); // 403s since 6 s: past the 10 s grace at 16 s

    assert.equal(logger.matching('error', 'RBAC denies it').length, 1);
    w.lock.clearFaults();
    await elector.stop();
  });

  test('a 403 on a verb that never worked is an error at once, even if others worked', async () => {
    const w = world();
    w.lock.set({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 3 });
    const { elector, logger } = candidate('a', w);
    const forbidden = new LeaseApiError({
      kind: 'forbidden',
      verb: 'update',
      name: 'test',
      namespace: 'default',
      statusCode: 403,
    });
    w.lock.failNext('update', forbidden, 1000); // RBAC grants get, not update

    elector.start();
    await w.clock.advance(0);

    assert.equal(logger.matching('error', 'RBAC denies it').length, 1);
    assert.deepEqual(logger.matching('warn', 'authorization cache'), []);
    w.lock.clearFaults();
    await elector.stop();
  });
});
