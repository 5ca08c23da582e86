/**
 * Pins the Kubernetes API facts the elector depends on, against the real kube-apiserver
 * (through @kubernetes/client-node, as the library talks to it).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ApiException,
  CoordinationV1Api,
  V1MicroTime,
  VersionApi,
  Watch,
  type V1Lease,
} from '@kubernetes/client-node';
import {
  coordinationApi,
  getTestCluster,
  kubeConfigFor,
  uniqueLeaseName,
} from '../support/cluster.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { startControlPlane } from '../support/control-plane.js';
import { eventually } from '../support/eventually.js';

const cluster = getTestCluster();
const namespace = cluster.namespace;
const admin = coordinationApi(cluster);

function leaseBody(name: string, renewTime: Date, holder = 'pod-a'): V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: 15,
      acquireTime: new V1MicroTime(renewTime.getTime()),
      renewTime: renewTime as V1MicroTime,
      leaseTransitions: 0,
    },
  };
}

/** Runs `call` and returns the ApiException it throws (fails the test if it does not throw). */
async function apiError(call: () => Promise<unknown>): Promise<ApiException<string>> {
  try {
    await call();
  } catch (err) {
    assert.ok(err instanceof ApiException, `expected ApiException, got ${String(err)}`);
    return err as ApiException<string>;
  }
  assert.fail('expected the API call to fail');
}

function reason(err: ApiException<string>): string {
  return (JSON.parse(err.body) as { reason?: string }).reason ?? '';
}

describe('Kubernetes Lease API facts (real kube-apiserver)', () => {
  test('the server is a real kube-apiserver reporting its version', async () => {
    const version = await kubeConfigFor(cluster).makeApiClient(VersionApi).getCode();
    assert.match(version.gitVersion, /^v1\.\d+\.\d+/);
  });

  test('a Lease with six-digit MicroTime fields is stored and its times read back', async () => {
    const name = uniqueLeaseName('microtime');
    const renewTime = new V1MicroTime('2026-01-30T10:00:00.123Z');
    const body = leaseBody(name, renewTime);
    assert.match(JSON.stringify(body.spec?.renewTime), /\.\d{6}Z"$/);

    await admin.createNamespacedLease({ namespace, body });
    const read = await admin.readNamespacedLease({ name, namespace });

    assert.equal(read.spec?.holderIdentity, 'pod-a');
    assert.equal(new Date(read.spec!.renewTime!).getTime(), renewTime.getTime());
    assert.equal(new Date(read.spec!.acquireTime!).getTime(), renewTime.getTime());
  });

  test('a plain JS Date (three fractional digits) in renewTime is rejected with 400', async () => {
    const name = uniqueLeaseName('plaindate');
    const err = await apiError(() =>
      admin.createNamespacedLease({ namespace, body: leaseBody(name, new Date()) }),
    );
    assert.equal(err.code, 400);
    assert.match(err.body, /renewTime|MicroTime|parsing time/i);
    await apiError(() => admin.readNamespacedLease({ name, namespace })); // nothing was written
  });

  test('PUT with a stale resourceVersion answers 409 Conflict', async () => {
    const name = uniqueLeaseName('stale');
    const created = await admin.createNamespacedLease({
      namespace,
      body: leaseBody(name, new V1MicroTime()),
    });
    const fresh = structuredClone(created);
    fresh.spec!.renewTime = new V1MicroTime();
    await admin.replaceNamespacedLease({ name, namespace, body: fresh });

    created.spec!.holderIdentity = 'pod-b';
    created.spec!.renewTime = new V1MicroTime();
    const err = await apiError(() =>
      admin.replaceNamespacedLease({ name, namespace, body: created }),
    );
    assert.equal(err.code, 409);
    assert.equal(reason(err), 'Conflict');
  });

  test('creating an existing Lease answers 409 AlreadyExists', async () => {
    const name = uniqueLeaseName('exists');
    await admin.createNamespacedLease({ namespace, body: leaseBody(name, new V1MicroTime()) });
    const err = await apiError(() =>
      admin.createNamespacedLease({ namespace, body: leaseBody(name, new V1MicroTime()) }),
    );
    assert.equal(err.code, 409);
    assert.equal(reason(err), 'AlreadyExists');
  });

  test('GET of a missing Lease answers 404 NotFound', async () => {
    const err = await apiError(() =>
      admin.readNamespacedLease({ name: uniqueLeaseName('missing'), namespace }),
    );
    assert.equal(err.code, 404);
    assert.equal(reason(err), 'NotFound');
  });

  describe('RBAC', () => {
    after(() => revokeLeaseAccess(cluster, 'dave'));

    test('an identity without RBAC gets 403; with a Role for get/create/update it succeeds', async () => {
      const dave = coordinationApi(cluster, 'dave');
      const name = uniqueLeaseName('rbac');

      const denied = await apiError(() => dave.readNamespacedLease({ name, namespace }));
      assert.equal(denied.code, 403);
      assert.equal(reason(denied), 'Forbidden');
      assert.match(denied.body, /system:serviceaccount:.*:dave/);

      await grantLeaseAccess(cluster, 'dave');
      // RBAC changes reach the authorizer through an informer: 403 for a moment.
      const created = await eventually(
        () => dave.createNamespacedLease({ namespace, body: leaseBody(name, new V1MicroTime()) }),
        { timeoutMs: 10_000 },
      );
      created.spec!.renewTime = new V1MicroTime();
      await dave.replaceNamespacedLease({ name, namespace, body: created });
      const read = await dave.readNamespacedLease({ name, namespace });
      assert.equal(read.spec?.holderIdentity, 'pod-a');
    });
  });

  test(
    'a Lease survives a kube-apiserver restart on the same etcd data dir',
    { skip: cluster.source !== 'control-plane' && 'restart needs our own control plane' },
    async () => {
      const own = await startControlPlane();
      try {
        const api = kubeConfigFor(own).makeApiClient(CoordinationV1Api);
        const name = uniqueLeaseName('restart');
        await api.createNamespacedLease({
          namespace: 'default',
          body: leaseBody(name, new V1MicroTime(), 'before-restart'),
        });

        await own.restart();

        const read = await kubeConfigFor(own)
          .makeApiClient(CoordinationV1Api)
          .readNamespacedLease({ name, namespace: 'default' });
        assert.equal(read.spec?.holderIdentity, 'before-restart');
      } finally {
        await own.stop();
      }
    },
  );

  test(
    'kube-apiserver (test control plane) ends open watches when it stops, instead of waiting for them',
    { skip: cluster.source !== 'control-plane' && 'stopping needs our own control plane' },
    async () => {
      // Found by the chaos harness: with watching followers connected, every restart took 30 s
      // (the HTTP server's shutdown timeout) until test/control-plane passed
      // --shutdown-watch-termination-grace-period.
      const own = await startControlPlane();
      let stopped = false;
      try {
        let watchEnded = false;
        const request = await new Watch(kubeConfigFor(own)).watch(
          '/apis/coordination.k8s.io/v1/namespaces/default/leases',
          {},
          () => {},
          () => (watchEnded = true),
        );
        const stopAt = performance.now();
        await own.stop();
        stopped = true;
        const stopMs = Math.round(performance.now() - stopAt);
        request.abort();
        assert.ok(watchEnded, 'the server ended the watch');
        assert.ok(stopMs < 15_000, `stopped in ${stopMs} ms with a watch open (30 s+ if it waits)`);
      } finally {
        if (!stopped) await own.stop();
      }
    },
  );
});
