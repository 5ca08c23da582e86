/**
 * LeaderElector + LeaseLock against the real kube-apiserver: several candidates, each
 * authenticated as its own service-account identity with exactly the elector's RBAC.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LeaseApiError } from 'nest-leader';
import { LeaseLock } from 'nest-leader/core';
import {
  coordinationApi,
  getTestCluster,
  kubeConfigFor,
  readAuditEvents,
  uniqueLeaseName,
} from '../support/cluster.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { startControlPlane } from '../support/control-plane.js';
import { eventually, found } from '../support/eventually.js';
import {
  FAST_TIMINGS,
  makeCandidates,
  summarize,
  waitForLeader,
  watchSingleLeader,
  type Candidate,
  type LeadershipRecord,
} from '../support/candidates.js';

const cluster = getTestCluster();
const { leaseDurationSeconds, retryPeriodSeconds } = FAST_TIMINGS;
const CANDIDATES = ['alice', 'bob', 'carol'] as const;
const admin = coordinationApi(cluster);

async function readHolder(leaseName: string): Promise<string | undefined> {
  const lease = await admin.readNamespacedLease({ name: leaseName, namespace: cluster.namespace });
  return lease.spec?.holderIdentity || undefined;
}

async function readTransitions(leaseName: string): Promise<number> {
  const lease = await admin.readNamespacedLease({ name: leaseName, namespace: cluster.namespace });
  return lease.spec?.leaseTransitions ?? 0;
}

/** The first `started` event after `sinceMs` by someone other than `previous`. */
function nextStart(history: LeadershipRecord[], sinceMs: number, previous: string) {
  return history.find((h) => h.event === 'started' && h.atMs >= sinceMs && h.identity !== previous);
}

async function waitForStart(
  history: LeadershipRecord[],
  sinceMs: number,
  previous: string,
  timeoutMs: number,
): Promise<LeadershipRecord> {
  return eventually(
    () =>
      found(
        nextStart(history, sinceMs, previous),
        `nobody took over from ${previous} within ${timeoutMs} ms`,
      ),
    { timeoutMs, intervalMs: 10 },
  );
}

describe('Lease election against the real kube-apiserver', () => {
  let running: Candidate[] = [];
  before(async () => {
    for (const identity of [...CANDIDATES, 'dave']) await grantLeaseAccess(cluster, identity);
  });
  after(async () => {
    for (const identity of [...CANDIDATES, 'dave']) await revokeLeaseAccess(cluster, identity);
  });
  async function stopAll() {
    await Promise.all(running.map((c) => c.elector.stop()));
    running = [];
  }

  test('three candidates: exactly one leads at any time and it is the Lease holder', async () => {
    const leaseName = uniqueLeaseName('single');
    const history: LeadershipRecord[] = [];
    running = makeCandidates(cluster, leaseName, CANDIDATES, history);
    const watch = watchSingleLeader(running);
    try {
      running.forEach((c) => c.elector.start());
      const leader = await waitForLeader(running, (leaseDurationSeconds + 2) * 1000);

      for (let i = 0; i < 12; i++) {
        const before = running.filter((c) => c.elector.isLeader());
        const holder = await readHolder(leaseName);
        const after = running.filter((c) => c.elector.isLeader());
        const steady = before.filter((c) => after.includes(c));
        for (const c of steady) assert.equal(holder, c.identity);
        await new Promise((r) => setTimeout(r, 400));
      }

      assert.equal(leader.elector.isLeader(), true, 'the first leader kept renewing');
      assert.deepEqual(watch.violations, []);
      assert.ok(watch.samples > 100);
      for (const c of running) assert.equal(c.elector.leader, leader.identity);
    } finally {
      watch.stop();
      await stopAll();
    }
  });

  test('leader stopped without release: another leads within leaseDuration + 1.2 × retryPeriod + 1 s', async (t) => {
    const leaseName = uniqueLeaseName('norelease');
    const history: LeadershipRecord[] = [];
    running = makeCandidates(cluster, leaseName, CANDIDATES, history, { releaseOnStop: false });
    const watch = watchSingleLeader(running);
    const boundMs = (leaseDurationSeconds + 1.2 * retryPeriodSeconds + 1) * 1000;
    const handovers: number[] = [];
    try {
      running.forEach((c) => c.elector.start());
      for (let round = 0; round < 3; round++) {
        const leader = await waitForLeader(running, boundMs * 2);
        const transitionsBefore = await readTransitions(leaseName);
        await leader.elector.stop();
        const stoppedAtMs = performance.now();

        const next = await waitForStart(history, stoppedAtMs, leader.identity, boundMs * 2);
        handovers.push(next.atMs - stoppedAtMs);
        assert.equal(next.leaseTransitions, transitionsBefore + 1);
        assert.equal(await readHolder(leaseName), next.identity);

        // The stopped process comes back as a fresh candidate with the same identity.
        const [fresh] = makeCandidates(cluster, leaseName, [leader.identity], history, {
          releaseOnStop: false,
        });
        running[running.indexOf(leader)] = fresh!;
        fresh!.elector.start();
      }
      const stats = summarize(handovers);
      t.diagnostic(`handover without release (ms): ${JSON.stringify({ ...stats, boundMs })}`);
      for (const ms of handovers) assert.ok(ms <= boundMs, `handover took ${ms} ms > ${boundMs}`);
      assert.deepEqual(watch.violations, []);
      assert.ok(watch.samples > 100, `${watch.samples} samples of isLeader()`);
    } finally {
      watch.stop();
      await stopAll();
    }
  });

  test('20 released handovers: each within 1.2 × retryPeriod + 0.5 s, leaseTransitions +1 each', async (t) => {
    const leaseName = uniqueLeaseName('release');
    const history: LeadershipRecord[] = [];
    running = makeCandidates(cluster, leaseName, CANDIDATES, history);
    const watch = watchSingleLeader(running);
    const boundMs = (1.2 * retryPeriodSeconds + 0.5) * 1000;
    const handovers: number[] = [];
    try {
      running.forEach((c) => c.elector.start());
      let leader = await waitForLeader(running, (leaseDurationSeconds + 2) * 1000);
      let transitions = await readTransitions(leaseName);
      for (let round = 0; round < 20; round++) {
        await leader.elector.stop();
        const releasedAtMs = performance.now();
        const next = await waitForStart(history, releasedAtMs, leader.identity, 10_000);
        handovers.push(next.atMs - releasedAtMs);

        assert.equal(next.leaseTransitions, transitions + 1, `round ${round}`);
        transitions = next.leaseTransitions;
        assert.equal(await readHolder(leaseName), next.identity);

        const [fresh] = makeCandidates(cluster, leaseName, [leader.identity], history);
        running[running.indexOf(leader)] = fresh!;
        fresh!.elector.start();
        leader = running.find((c) => c.identity === next.identity)!;
      }
      assert.equal(await readTransitions(leaseName), transitions);
      const stats = summarize(handovers);
      t.diagnostic(`handover with release (ms): ${JSON.stringify({ ...stats, boundMs })}`);
      for (const ms of handovers) assert.ok(ms <= boundMs, `handover took ${ms} ms > ${boundMs}`);
      assert.deepEqual(watch.violations, []);
      // Handovers take ~0.1 s each: the whole test may last only 2 s (~100 samples).
      assert.ok(watch.samples >= 20, `${watch.samples} samples of isLeader(), one per handover`);
    } finally {
      watch.stop();
      await stopAll();
    }
  });

  test('an identity without RBAC on leases gets a clear 403 error and no crash loop', async () => {
    const leaseName = uniqueLeaseName('forbidden');
    running = makeCandidates(cluster, leaseName, ['nobody'], []);
    const [nobody] = running;
    const startedAt = new Date();
    nobody!.elector.start();
    await new Promise((r) => setTimeout(r, 4_000));

    assert.equal(nobody!.elector.isLeader(), false);
    assert.equal(
      nobody!.elector.health().healthy,
      true,
      'a follower that cannot read is not wedged',
    );
    const errors = nobody!.logs.filter((l) => l.level === 'error' || l.level === 'warn');
    assert.ok(errors.length >= 1, 'the failure is reported');
    assert.ok(errors.length <= 2, `reported ${errors.length} times in 4 s: not rate limited`);
    assert.match(errors[0]!.message, /forbidden|403/i);
    assert.match(errors[0]!.message, /leases/);
    assert.match(errors[0]!.message, new RegExp(cluster.namespace));
    assert.match(errors[0]!.message, /\bget\b/);

    if (cluster.auditLogPath) {
      const requests = readAuditEvents(cluster).filter(
        (e) =>
          e.user.username === cluster.identities.nobody!.username &&
          e.objectRef?.name === leaseName &&
          new Date(e.requestReceivedTimestamp) >= startedAt,
      );
      // One attempt per retryPeriod × [1, 1.2): about 4 in 4 s, not a tight loop.
      assert.ok(requests.length >= 2 && requests.length <= 6, `${requests.length} requests`);
      assert.ok(requests.every((e) => e.responseStatus?.code === 403));
    }
    await stopAll();
  });

  test('LeaseApiError classifies a 403 as a configuration problem naming verb, resource and namespace', async () => {
    const lock = new LeaseLock({
      kubeConfig: kubeConfigFor(cluster, 'nobody'),
      name: uniqueLeaseName('classify'),
      namespace: cluster.namespace,
      identity: 'nobody',
    });
    const err = await lock.get().then(
      () => assert.fail('expected 403'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof LeaseApiError);
    assert.equal(err.kind, 'forbidden');
    assert.equal(err.statusCode, 403);
    assert.match(err.message, /get/);
    assert.match(err.message, /leases/);
    assert.match(err.message, new RegExp(cluster.namespace));
  });

  test(
    'kube-apiserver restarted mid-term: the leader keeps or regains the Lease, never two leaders',
    { skip: cluster.source !== 'control-plane' && 'restart needs our own control plane' },
    async () => {
      const own = await startControlPlane();
      const history: LeadershipRecord[] = [];
      let candidates: Candidate[] = [];
      try {
        for (const identity of CANDIDATES) await grantLeaseAccess(own, identity);
        const leaseName = uniqueLeaseName('restart');
        candidates = makeCandidates(own, leaseName, CANDIDATES, history);
        const watch = watchSingleLeader(candidates);
        candidates.forEach((c) => c.elector.start());
        const first = await waitForLeader(candidates, (leaseDurationSeconds + 2) * 1000);

        await own.restart();
        const afterRestart = await waitForLeader(candidates, (leaseDurationSeconds + 4) * 1000);
        await new Promise((r) => setTimeout(r, 2_000));
        watch.stop();

        assert.deepEqual(watch.violations, []);
        assert.ok(watch.samples > 100, `${watch.samples} samples of isLeader()`);
        assert.equal(afterRestart.elector.isLeader(), true);
        const lease = await coordinationApi(own).readNamespacedLease({
          name: leaseName,
          namespace: own.namespace,
        });
        assert.equal(lease.spec?.holderIdentity, afterRestart.identity);
        assert.ok(
          history.some((h) => h.identity === first.identity && h.event === 'started'),
          'the first leader is in the history',
        );
      } finally {
        await Promise.all(candidates.map((c) => c.elector.stop()));
        await own.stop();
      }
    },
  );
});
