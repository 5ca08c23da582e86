/**
 * PrometheusElectionObserver fed by real LeaderElectors (MemoryLock, ManualClock): the values a
 * scrape returns after each thing an election goes through.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LeaseApiError } from 'nest-leader';
import { ELECTION_METRIC_NAMES as M, PrometheusElectionObserver } from 'nest-leader/observability';
import { Registry } from 'prom-client';
import { candidate, s, world } from '../core/elector.fixture.js';
import { value } from './metrics.fixture.js';

/** One candidate with its own registry (one per process, as in production). */
function observed(identity: string, w: ReturnType<typeof world>) {
  const registry = new Registry();
  const observer = new PrometheusElectionObserver({ registry, clock: w.clock });
  const c = candidate(identity, w, { name: 'billing', observer });
  const metric = (name: string, labels: Record<string, string> = {}, sample?: string) =>
    value(registry, name, { name: 'billing', ...labels }, sample);
  return { ...c, registry, metric };
}

const forbidden = () =>
  new LeaseApiError({
    kind: 'forbidden',
    verb: 'update',
    name: 'test',
    namespace: 'default',
    statusCode: 403,
  });

describe('PrometheusElectionObserver on a LeaderElector', () => {
  it('a leader and a follower: master status, terms, observed leader, lock requests', async () => {
    const w = world();
    const a = observed('a', w);
    const b = observed('b', w);
    a.elector.start();
    await w.clock.advance(0);
    b.elector.start();
    await w.clock.advance(s(1));

    assert.equal(await a.metric(M.masterStatus), 1);
    assert.equal(await b.metric(M.masterStatus), 0);
    assert.equal(await a.metric(M.termsStarted, { reason: 'created' }), 1);
    assert.equal(await b.metric(M.termsStarted, { reason: 'created' }), 0);
    assert.equal(await b.metric(M.observedLeader, { holder: 'a' }), 1);
    assert.equal(await a.metric(M.transitions), 0);
    assert.equal(
      await a.metric(
        M.lockRequestDuration,
        { operation: 'create', outcome: 'success' },
        `${M.lockRequestDuration}_count`,
      ),
      1,
    );
    // a renews every 2 s by updating its cached Lease: no slow path, fresh renewals.
    await w.clock.advance(s(4));
    assert.equal(await a.metric(M.slowPath), 0);
    assert.ok((await a.metric(M.timeSinceLastRenew))! < 2);
    await a.elector.stop();
    await b.elector.stop();
  });

  it('renewals failing: errors by kind, the renewal age grows, step-down at renewDeadline', async () => {
    const w = world();
    const a = observed('a', w);
    a.elector.start();
    await w.clock.advance(s(1));
    w.lock.failNext('update', forbidden(), 100);
    await w.clock.advance(s(5));
    const age = (await a.metric(M.timeSinceLastRenew))!;
    assert.ok(age > 4 && age < 10, `renewal age ${age}`);
    assert.ok((await a.metric(M.lockErrors, { operation: 'update', kind: 'forbidden' }))! >= 2);
    assert.ok((await a.metric(M.slowPath))! >= 2, 'each failed fast path fell back to GET');
    await w.clock.advance(s(6)); // past renewDeadline (10 s)
    assert.equal(await a.metric(M.masterStatus), 0);
    assert.equal(await a.metric(M.termsEnded, { reason: 'renew-deadline-exceeded' }), 1);
    assert.equal(await a.metric(M.timeSinceLastRenew), undefined);
    assert.equal(await a.metric(M.leadershipDuration, {}, `${M.leadershipDuration}_count`), 1);
    w.lock.clearFaults();
    await a.elector.stop();
  });

  it('a release and a takeover: the follower counts one transition, as the Lease does', async () => {
    const w = world();
    const a = observed('a', w);
    const b = observed('b', w);
    a.elector.start();
    await w.clock.advance(0);
    b.elector.start();
    await w.clock.advance(s(1));
    await a.elector.stop(); // releases
    await w.clock.advance(s(3));
    assert.equal(b.elector.isLeader(), true);
    assert.equal(await b.metric(M.transitions), 1);
    assert.equal(await a.metric(M.termsEnded, { reason: 'stopped' }), 1);
    assert.equal(await b.metric(M.masterStatus), 1);
    assert.equal(w.lock.read()!.record.leaseTransitions, 1);
    await b.elector.stop();
  });
});
