/**
 * The demo's Role (apps/demo/deploy/role.yaml) is what its two elections need: with it, the
 * library's LeaseLock + LeaderElector acquire, renew, watch and release the Lease as the demo's
 * ServiceAccount, the sharded election creates, lists and watches its member and assignment
 * Leases (names not known in advance: the one rule without resourceNames), and a Lease in
 * another namespace stays out of reach; with `update` removed, they cannot acquire, and the
 * error names the verb, the resource and the fix.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node';
import { readLease } from '@nest-leader/demo/launcher/kube-access';
import { type LeaderTerm, LeaseApiError } from 'nest-leader';
import {
  assignmentLeaseName,
  KubernetesShardLeaseStore,
  LeaderElector,
  LeaseLock,
  memberLeaseName,
  ShardedElection,
} from 'nest-leader/core';
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
    assert.deepEqual(serviceAccount.verbs, ['get', 'list', 'watch', 'create', 'update']);

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

    // A Role: its verbs reach this namespace's Leases only.
    const other = new LeaseLock({
      kubeConfig: serviceAccount.kubeConfig,
      name: uniqueLeaseName('demo-rbac-other'),
      namespace: namespace === 'kube-system' ? 'default' : 'kube-system',
    });
    await assert.rejects(other.get(), (error: unknown) => {
      assert.ok(error instanceof LeaseApiError && error.kind === 'forbidden', String(error));
      return true;
    });
  });

  it("runs the sharded election with exactly the demo's Role: member and assignment Leases created, listed, watched, every shard owned", async () => {
    const leaseName = uniqueLeaseName('demo-rbac-shards');
    const serviceAccount = await provisionDemoServiceAccount(cluster, leaseName);
    cleanups.push(() => serviceAccount.dispose());
    const logger = new RecordingLogger();
    const members = ['demo-rbac-a', 'demo-rbac-b'].map(
      (identity) =>
        new ShardedElection({
          name: leaseName,
          shards: 4,
          identity,
          store: new KubernetesShardLeaseStore({
            kubeConfig: serviceAccount.kubeConfig,
            namespace,
            identity,
          }),
          ...timings,
          logger,
        }),
    );
    cleanups.push(async () => {
      await Promise.all(members.map((m) => m.stop()));
      const api = admin.makeApiClient(CoordinationV1Api);
      const names = [
        leaseName,
        assignmentLeaseName(leaseName),
        ...['demo-rbac-a', 'demo-rbac-b'].map((id) => memberLeaseName(leaseName, id)),
      ];
      await Promise.all(
        names.map((name) => api.deleteNamespacedLease({ name, namespace }).catch(() => {})),
      );
    });
    for (const member of members) member.start();
    await eventually(
      () => {
        const owned = members.map((m) => m.ownedShards());
        assert.deepEqual(
          owned.flat().sort((a, b) => a - b),
          [0, 1, 2, 3],
          `every shard owned once: ${JSON.stringify(owned)}`,
        );
        assert.deepEqual(
          owned.map((o) => o.length),
          [2, 2],
        );
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    assert.ok(
      await readLease(admin, namespace, memberLeaseName(leaseName, 'demo-rbac-a')),
      'a member Lease, created as the ServiceAccount',
    );
    assert.ok(await readLease(admin, namespace, assignmentLeaseName(leaseName)), 'the assignment');
    assert.deepEqual(
      logger.messages('error').filter((m) => /forbidden/i.test(m)),
      [],
      'nothing forbidden',
    );
  });

  it('cannot take the Lease without update, and says which verb is missing', async () => {
    const leaseName = uniqueLeaseName('demo-rbac-no-update');
    const serviceAccount = await provisionDemoServiceAccount(cluster, leaseName, {
      withoutVerbs: ['update'],
    });
    track(serviceAccount, leaseName);
    assert.deepEqual(serviceAccount.verbs, ['get', 'list', 'watch', 'create']);
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
