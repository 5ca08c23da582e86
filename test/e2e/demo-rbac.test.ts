/**
 * The demo's Role (apps/demo/deploy/role.yaml) is exactly what the elector needs: with it, the
 * library's LeaseLock + LeaderElector acquire, renew, watch and release the Lease as the demo's
 * ServiceAccount, and cannot touch another Lease; with `update` removed, they cannot acquire,
 * and the error names the verb, the resource and the fix.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node';
import { readLease } from '@nest-leader/demo/launcher/kube-access';
import { type LeaderTerm, LeaseApiError } from 'nest-leader';
import { LeaderElector, LeaseLock } from 'nest-leader/core';
import { RecordingLogger } from 'nest-leader/testing';
import { getTestCluster, kubeConfigFor, uniqueLeaseName } from '../support/cluster.js';
import {
  type DemoServiceAccount,
  provisionDemoServiceAccount,
} from './support/demo-service-account.js';
import { eventually } from '../support/eventually.js';
import { withTimeout } from '../support/with-timeout.js';

const timings = { leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 1 };

describe("the demo's RBAC with the library's elector", { timeout: 60_000 }, () => {
  const cluster = getTestCluster();
  const admin = kubeConfigFor(cluster);
  const namespace = cluster.namespace;
  const cleanups: (() => Promise<unknown>)[] = [];

  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  function track(serviceAccount: DemoServiceAccount, leaseName: string): void {
    cleanups.push(
      () => serviceAccount.dispose(),
      () =>
        admin
          .makeApiClient(CoordinationV1Api)
          .deleteNamespacedLease({ name: leaseName, namespace }),
    );
  }

  it("acquires, renews, watches and releases its Lease with exactly the demo's Role, and nothing else", async () => {
    const leaseName = uniqueLeaseName('demo-rbac');
    const serviceAccount = await provisionDemoServiceAccount(cluster, leaseName);
    track(serviceAccount, leaseName);
    assert.deepEqual(serviceAccount.verbs, ['create', 'get', 'update', 'watch']);

    const logger = new RecordingLogger();
    let onStartedLeading!: (term: LeaderTerm) => void;
    const started = new Promise<LeaderTerm>((resolve) => (onStartedLeading = resolve));
    const elector = new LeaderElector({
      lock: new LeaseLock({ kubeConfig: serviceAccount.kubeConfig, name: leaseName, namespace }),
      identity: 'demo-rbac-candidate',
      ...timings,
      logger,
      callbacks: { onStartedLeading },
    });
    cleanups.push(() => elector.stop());
    elector.start();
    const term = await withTimeout(started, 10_000, 'leadership as the demo ServiceAccount');
    assert.equal(term.leaseTransitions, 0);
    assert.equal(
      (await readLease(admin, namespace, leaseName))?.spec?.holderIdentity,
      'demo-rbac-candidate',
    );

    // A renewal (update) succeeds too: renewTime moves while it still leads.
    const firstRenew = (await readLease(admin, namespace, leaseName))?.spec?.renewTime;
    await eventually(
      async () => {
        const lease = await readLease(admin, namespace, leaseName);
        assert.notEqual(String(lease?.spec?.renewTime), String(firstRenew));
      },
      { timeoutMs: 5000, intervalMs: 200 },
    );
    assert.ok(elector.isLeader());

    await elector.stop();
    assert.equal(
      (await readLease(admin, namespace, leaseName))?.spec?.holderIdentity,
      '',
      'released',
    );
    assert.deepEqual(logger.messages('error'), []);
    assert.deepEqual(
      logger.messages('warn'),
      [],
      'no "Cannot watch" fallback: the Role allows watch',
    );

    // resourceNames confine the Role to this Lease.
    const other = new LeaseLock({
      kubeConfig: serviceAccount.kubeConfig,
      name: uniqueLeaseName('demo-rbac-other'),
      namespace,
    });
    await assert.rejects(other.get(), (error: unknown) => {
      assert.ok(error instanceof LeaseApiError && error.kind === 'forbidden', String(error));
      return true;
    });
  });

  it('cannot take the Lease without update, and says which verb is missing', async () => {
    const leaseName = uniqueLeaseName('demo-rbac-no-update');
    const serviceAccount = await provisionDemoServiceAccount(cluster, leaseName, {
      withoutVerbs: ['update'],
    });
    track(serviceAccount, leaseName);
    assert.deepEqual(serviceAccount.verbs, ['create', 'get', 'watch']);
    // A free Lease (released by a previous holder): taking it needs update.
    await admin.makeApiClient(CoordinationV1Api).createNamespacedLease({
      namespace,
      body: {
        metadata: { name: leaseName, namespace },
        spec: {
          holderIdentity: '',
          leaseDurationSeconds: 1,
          leaseTransitions: 3,
          renewTime: new V1MicroTime(),
        },
      },
    });

    // The lock itself: a LeaseApiError of kind forbidden, for the verb update.
    const lock = new LeaseLock({
      kubeConfig: serviceAccount.kubeConfig,
      name: leaseName,
      namespace,
      identity: 'demo-rbac-candidate',
    });
    const stored = await lock.get();
    assert.ok(stored, 'get is allowed');
    await assert.rejects(
      lock.update({ ...stored.record, holderIdentity: 'demo-rbac-candidate' }, stored.version),
      (error: unknown) => {
        assert.ok(error instanceof LeaseApiError, `a LeaseApiError, got ${String(error)}`);
        assert.equal(error.kind, 'forbidden');
        assert.equal(error.statusCode, 403);
        assert.equal(error.verb, 'update');
        assert.equal(error.namespace, namespace);
        assert.equal(error.leaseName, leaseName);
        assert.match(
          error.message,
          new RegExp(
            `^Cannot update leases\\.coordination\\.k8s\\.io "${leaseName}" in namespace "${namespace}" ` +
              `as candidate "demo-rbac-candidate": forbidden \\(HTTP 403\\)\\.`,
          ),
        );
        assert.match(
          error.message,
          /grant the pod's ServiceAccount the verbs get, create and update/,
        );
        return true;
      },
    );

    // The elector: never leads, logs that error as a configuration problem.
    const logger = new RecordingLogger();
    let led = false;
    const elector = new LeaderElector({
      lock,
      identity: 'demo-rbac-candidate',
      ...timings,
      logger,
      callbacks: { onStartedLeading: () => (led = true) },
    });
    cleanups.push(() => elector.stop());
    elector.start();
    const logged = await eventually(
      () => {
        const line = logger
          .messages('error')
          .find((m) => m.includes('Cannot update leases.coordination.k8s.io'));
        assert.ok(
          line,
          `an error naming the update verb; errors so far: ${JSON.stringify(logger.messages('error'))}`,
        );
        return line;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    assert.match(logged, /forbidden \(HTTP 403\)/);
    assert.equal(led, false);
    assert.equal(elector.isLeader(), false);
    await elector.stop();
    const lease = await readLease(admin, namespace, leaseName);
    assert.equal(lease?.spec?.holderIdentity, '', 'the Lease is still free');
    assert.equal(lease?.spec?.leaseTransitions, 3);
  });
});
