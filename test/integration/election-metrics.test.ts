/**
 * Prometheus metrics (PrometheusElectionObserver) of real elections on the real kube-apiserver:
 * the values after an acquisition, a release, a crash (no release) and API errors (RBAC revoked
 * mid-term), read back from each candidate's own registry as a scrape would (one registry per
 * candidate, as one per process).
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { LeaderElector, LeaseLock } from 'nest-leader/core';
import { ELECTION_METRIC_NAMES as M, PrometheusElectionObserver } from 'nest-leader/observability';
import { RecordingLogger } from 'nest-leader/testing';
import { Registry } from 'prom-client';
import { FAST_TIMINGS } from '../support/candidates.js';
import {
  coordinationApi,
  getTestCluster,
  kubeConfigFor,
  uniqueLeaseName,
} from '../support/cluster.js';
import { grantLeaseAccess } from '../support/rbac.js';
import { eventually } from '../support/eventually.js';

const cluster = getTestCluster();
const namespace = cluster.namespace;

interface Replica {
  identity: string;
  leaseName: string;
  registry: Registry;
  elector: LeaderElector;
}

function replica(identity: string, leaseName: string, releaseOnStop: boolean): Replica {
  const registry = new Registry();
  const elector = new LeaderElector({
    name: leaseName,
    lock: new LeaseLock({
      kubeConfig: kubeConfigFor(cluster, identity),
      name: leaseName,
      namespace,
      identity,
    }),
    identity,
    ...FAST_TIMINGS,
    releaseOnStop,
    logger: new RecordingLogger(),
    observer: new PrometheusElectionObserver({ registry }),
  });
  return { identity, leaseName, registry, elector };
}

/** The sample of `metric` with exactly `labels` (plus `name`) in the replica's registry. */
async function scrape(
  r: Replica,
  metric: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const family = metric.replace(/_(sum|count|bucket)$/, '');
  const { values } = await r.registry.getSingleMetric(family)!.get();
  const wanted: Record<string, string> = { name: r.leaseName, ...labels };
  const sample = values.find(
    (v) =>
      ((v as { metricName?: string }).metricName ?? family) === metric &&
      Object.keys(v.labels).length === Object.keys(wanted).length &&
      Object.entries(wanted).every(([k, value]) => String(v.labels[k]) === value),
  );
  return sample?.value;
}

async function leaseTransitions(leaseName: string): Promise<number> {
  const lease = await coordinationApi(cluster).readNamespacedLease({ name: leaseName, namespace });
  return lease.spec!.leaseTransitions!;
}

describe('election metrics on the real API server', { timeout: 120_000 }, () => {
  before(async () => {
    for (const identity of ['alice', 'bob', 'carol']) await grantLeaseAccess(cluster, identity);
  });

  test('after acquire, release, crash and API errors, each replica reports what happened to it', async () => {
    const leaseName = uniqueLeaseName('metrics');
    // alice releases on shutdown; bob and carol stop like a crash, without releasing.
    const [alice, bob, carol] = [
      replica('alice', leaseName, true),
      replica('bob', leaseName, false),
      replica('carol', leaseName, false),
    ];
    try {
      // Acquire: alice creates the Lease and leads; bob and carol follow.
      alice.elector.start();
      await eventually(() => assert.ok(alice.elector.isLeader(), 'alice leads'), {
        timeoutMs: 15_000,
        intervalMs: 20,
      });
      bob.elector.start();
      carol.elector.start();
      await eventually(
        () =>
          assert.ok(
            bob.elector.leader === 'alice' && carol.elector.leader === 'alice',
            'followers see alice',
          ),
        { timeoutMs: 15_000, intervalMs: 20 },
      );
      assert.equal(await scrape(alice, M.masterStatus), 1);
      assert.equal(await scrape(bob, M.masterStatus), 0);
      assert.equal(await scrape(alice, M.termsStarted, { reason: 'created' }), 1);
      assert.equal(await scrape(alice, M.transitions), 0, 'a first sighting is no transition');
      assert.equal(await scrape(bob, M.observedLeader, { holder: 'alice' }), 1);
      assert.ok(
        (await scrape(alice, `${M.lockRequestDuration}_count`, {
          operation: 'create',
          outcome: 'success',
        }))! >= 1,
      );
      assert.ok(
        (await scrape(bob, `${M.lockRequestDuration}_count`, {
          operation: 'get',
          outcome: 'success',
        }))! >= 1,
      );
      const since = (await scrape(alice, M.timeSinceLastRenew))!;
      assert.ok(
        since >= 0 && since < FAST_TIMINGS.renewDeadlineSeconds,
        `since last renew ${since}`,
      );
      assert.equal(await scrape(bob, M.timeSinceLastRenew), undefined, 'followers do not renew');

      // Release: alice shuts down; someone takes over at once.
      await alice.elector.stop();
      assert.equal(await scrape(alice, M.masterStatus), 0);
      assert.equal(await scrape(alice, M.termsEnded, { reason: 'stopped' }), 1);
      assert.equal(await scrape(alice, `${M.leadershipDuration}_count`), 1);
      await eventually(
        () => assert.ok(bob.elector.isLeader() || carol.elector.isLeader(), 'takeover'),
        { timeoutMs: 15_000, intervalMs: 20 },
      );
      // Make bob the leader for the crash below if carol won the race: stop carol's luck by
      // waiting until both see the same holder, then crash whoever leads.
      const second = bob.elector.isLeader() ? bob : carol;
      const third = second === bob ? carol : bob;
      await eventually(() => assert.ok(third.elector.leader === second.identity, 'both see it'), {
        timeoutMs: 15_000,
        intervalMs: 20,
      });
      assert.equal(await scrape(second, M.masterStatus), 1);
      assert.equal(await scrape(second, M.termsStarted, { reason: 'release' }), 1);
      assert.equal(await scrape(second, M.transitions), 1, 'alice → (released) → second');
      assert.equal(await scrape(third, M.transitions), 1);

      // Crash: the leader stops renewing without releasing; the other takes over after
      // leaseDuration by its own observation.
      await second.elector.stop();
      await eventually(() => assert.ok(third.elector.isLeader(), `${third.identity} takes over`), {
        timeoutMs: 15_000,
        intervalMs: 20,
      });
      assert.equal(await scrape(third, M.transitions), 2);
      assert.equal(await scrape(third, M.termsStarted, { reason: 'expired' }), 1);
      assert.equal(await leaseTransitions(leaseName), 2, 'the Lease agrees: two handovers');

      // API errors: RBAC now refuses the leader's renewals; it counts them, then steps down.
      await grantLeaseAccess(cluster, third.identity, ['get']);
      await eventually(() => assert.ok(!third.elector.isLeader(), 'steps down'), {
        timeoutMs: 15_000,
        intervalMs: 20,
      });
      assert.ok(
        (await scrape(third, M.lockErrors, { operation: 'update', kind: 'forbidden' }))! >= 1,
      );
      assert.equal(await scrape(third, M.termsEnded, { reason: 'renew-deadline-exceeded' }), 1);
      assert.equal(await scrape(third, M.masterStatus), 0);
      assert.equal(await scrape(third, M.timeSinceLastRenew), undefined);
      const text = await third.registry.metrics();
      assert.match(text, new RegExp(`leader_election_master_status\\{name="${leaseName}"\\} 0`));
    } finally {
      for (const r of [alice, bob, carol]) await r.elector.stop();
      for (const identity of ['alice', 'bob', 'carol']) await grantLeaseAccess(cluster, identity);
    }
  });
});
