/**
 * `yieldToHigherPriority` against the real kube-apiserver with real processes: a leader of
 * priority 1 hands the Lease, gracefully, to a candidate of priority 5 that starts after it —
 * one new term with reason `preferred`, one transition, no overlap — and a leader without the
 * option keeps it. Each process authenticates with exactly the elector's RBAC.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { coordinationApi, getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import { candidateFleet } from '../support/candidate-fleet.js';

const cluster = getTestCluster();
const admin = coordinationApi(cluster);
const LEASE_MS = FAST_TIMINGS.leaseDurationSeconds * 1000;
const RETRY_MS = FAST_TIMINGS.retryPeriodSeconds * 1000;
const USERS = ['alice', 'bob'] as const;

describe('yieldToHigherPriority (real processes, real kube-apiserver)', () => {
  const fleet = candidateFleet(cluster, USERS);
  const spawn = (
    leaseName: string,
    identity: string,
    user: (typeof USERS)[number],
    priority: number,
    yieldToHigherPriority: boolean,
  ) =>
    fleet.start(leaseName, user, {
      identity,
      priority,
      extraArgs: yieldToHigherPriority ? ['--yield-to-higher-priority'] : [],
    });

  async function leaseOf(name: string) {
    return (await admin.readNamespacedLease({ name, namespace: cluster.namespace })).spec!;
  }

  test('a higher priority starting later takes over by a graceful handoff: one term, reason preferred', async () => {
    const leaseName = uniqueLeaseName('yield');
    const low = await spawn(leaseName, 'low', 'alice', 1, true);
    const lowStarted = await low.waitFor((e) => e.event === 'started', LEASE_MS, 'low started');
    const high = await spawn(leaseName, 'high', 'bob', 5, true);

    const started = await high.waitFor(
      (e) => e.event === 'started',
      LEASE_MS + 3 * RETRY_MS,
      'high started',
    );

    assert.equal(started.reason, 'preferred');
    assert.equal(started.leaseTransitions, lowStarted.leaseTransitions! + 1, 'one transition');
    const stopped = low.events.find((e) => e.event === 'stopped');
    assert.ok(stopped, 'the old leader ended its term');
    assert.ok(stopped.monotonicMs <= started.monotonicMs, 'drained before the new term began');
    assert.ok(
      started.monotonicMs - stopped.monotonicMs < LEASE_MS,
      `handed over, not waited out: ${started.monotonicMs - stopped.monotonicMs} ms`,
    );
    // Let a yield back, or a second takeover, show up if one were coming.
    await new Promise((r) => setTimeout(r, 3 * RETRY_MS));
    assert.equal(low.eventsWhere((e) => e.event === 'started').length, 1, 'low led once');
    assert.equal(high.eventsWhere((e) => e.event === 'started').length, 1, 'high leads on');
    const spec = await leaseOf(leaseName);
    assert.equal(spec.holderIdentity, 'high');
    assert.equal(spec.leaseTransitions, started.leaseTransitions);
  });

  test('without the option the leader keeps the Lease (never by force)', async () => {
    const leaseName = uniqueLeaseName('no-yield');
    const low = await spawn(leaseName, 'low', 'alice', 1, false);
    await low.waitFor((e) => e.event === 'started', LEASE_MS, 'low started');
    const high = await spawn(leaseName, 'high', 'bob', 5, true);

    await new Promise((r) => setTimeout(r, 4 * RETRY_MS));

    assert.equal(high.eventsWhere((e) => e.event === 'started').length, 0, 'high never led');
    assert.equal((await leaseOf(leaseName)).holderIdentity, 'low');
  });
});
