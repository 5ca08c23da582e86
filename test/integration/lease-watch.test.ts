/**
 * Watching the Lease against the real kube-apiserver: what `LeaseLock.watch` delivers, what RBAC
 * it needs (and that `resourceNames` can restrict it), how it survives the server ending the
 * watch, and what it buys the elector: no reads in steady state, a
 * released Lease taken at once, and a plain polling fallback without RBAC `watch`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RbacAuthorizationV1Api, V1MicroTime, Watch } from '@kubernetes/client-node';
import { LeaseApiError, type ElectionLogger } from 'nest-leader';
import {
  LeaderElector,
  LeaseLock,
  type LockWatchListener,
  type VersionedLeaseRecord,
} from 'nest-leader/core';
import {
  coordinationApi,
  getTestCluster,
  kubeConfigFor,
  readAuditEvents,
  uniqueLeaseName,
} from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';

const cluster = getTestCluster();
const admin = coordinationApi(cluster);
const namespace = cluster.namespace;

/** What a watch reported, in order, with arrival times. */
function recordingListener() {
  const records: (VersionedLeaseRecord | undefined)[] = [];
  const events: string[] = [];
  let unavailable: unknown;
  const listener: LockWatchListener = {
    onRecord: (current) => {
      records.push(current);
      events.push(current ? `record ${current.version}` : 'deleted');
    },
    onConnected: () => events.push('connected'),
    onDisconnected: (error) => events.push(error ? `failed ${String(error)}` : 'ended'),
    onUnavailable: (error) => {
      unavailable = error;
      events.push('unavailable');
    },
  };
  return {
    listener,
    records,
    events,
    get unavailable() {
      return unavailable;
    },
  };
}

async function createLease(name: string, holderIdentity = 'someone') {
  return admin.createNamespacedLease({
    namespace,
    body: {
      metadata: { name, namespace },
      spec: {
        holderIdentity,
        leaseDurationSeconds: 15,
        leaseTransitions: 0,
        renewTime: new V1MicroTime(),
      },
    },
  });
}

async function touchLease(name: string): Promise<string> {
  const lease = await admin.readNamespacedLease({ name, namespace });
  lease.spec!.renewTime = new V1MicroTime();
  const written = await admin.replaceNamespacedLease({ name, namespace, body: lease });
  return written.metadata!.resourceVersion!;
}

/** A Role limited to `resourceNames` (get, update, watch) plus create, bound to `identity`. */
async function grantNamedLeaseAccess(identity: string, leaseName: string, verbs: string[]) {
  const rbac = kubeConfigFor(cluster).makeApiClient(RbacAuthorizationV1Api);
  const name = `${identity}-leases`;
  const username = cluster.identities[identity]!.username;
  const body = {
    metadata: { name, namespace },
    rules: [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: [leaseName],
        verbs,
      },
    ],
  };
  await rbac.createNamespacedRole({ namespace, body });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: username }],
    },
  });
}

function lockAs(identity: string, name: string): LeaseLock {
  return new LeaseLock({ kubeConfig: kubeConfigFor(cluster, identity), name, namespace, identity });
}

describe('LeaseLock.watch on the real kube-apiserver', () => {
  const controllers: AbortController[] = [];
  after(() => controllers.forEach((c) => c.abort()));
  function watchSignal(): AbortSignal {
    const controller = new AbortController();
    controllers.push(controller);
    return controller.signal;
  }

  describe('with get, update and watch limited to the Lease by resourceNames', () => {
    const leaseName = uniqueLeaseName('watched');
    const otherLease = uniqueLeaseName('not-mine');
    before(async () => {
      await grantNamedLeaseAccess('carol', leaseName, ['get', 'update', 'watch']);
      await createLease(leaseName);
      await createLease(otherLease);
    });
    after(() => revokeLeaseAccess(cluster, 'carol'));

    test('every write arrives as it happens, in order, with its resourceVersion', async () => {
      const lock = lockAs('carol', leaseName);
      await lock.get();
      const seen = recordingListener();
      lock.watch(seen.listener, watchSignal());
      await eventually(() => assert.ok(seen.events.includes('connected'), 'connected'), {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
      const written: string[] = [];
      for (let i = 0; i < 5; i++) {
        written.push(await touchLease(leaseName));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await eventually(() => assert.ok(seen.records.length >= 5, 'five records'), {
        timeoutMs: 5000,
        intervalMs: 20,
      });
      assert.deepEqual(
        seen.records.map((r) => r?.version),
        written,
      );
      assert.equal(seen.unavailable, undefined);
    });

    test('resourceNames does restrict watch: the request names the Lease by field selector; another Lease is forbidden', async () => {
      const seen = recordingListener();
      lockAs('carol', otherLease).watch(seen.listener, watchSignal());
      await eventually(() => assert.ok(seen.unavailable !== undefined, 'refused'), {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
      const error = seen.unavailable;
      assert.ok(error instanceof LeaseApiError, String(error));
      assert.equal(error.kind, 'forbidden');
      assert.equal(error.verb, 'watch');
      assert.equal(error.statusCode, 403);
      assert.match(error.message, /grant .* the verb watch/);
      assert.ok(!seen.events.includes('connected'));
      // And without the field selector (a namespace-wide watch) even its own Lease is forbidden.
      const status = await new Promise<number | undefined>((resolve) => {
        void new Watch(kubeConfigFor(cluster, 'carol')).watch(
          `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
          { timeoutSeconds: 1 },
          () => undefined,
          (error: { statusCode?: number } | null) => resolve(error?.statusCode),
        );
      });
      assert.equal(status, 403, 'a namespace-wide watch is forbidden');
    });

    test('a watch the server ends is resumed from the last version: no write is missed', async () => {
      const lock = lockAs('carol', leaseName);
      await lock.get();
      const seen = recordingListener();
      const startedAt = new Date();
      lock.watch(seen.listener, watchSignal(), { timeoutSeconds: 1 });
      await eventually(() => assert.ok(seen.events.includes('connected'), 'connected'), {
        timeoutMs: 10_000,
        intervalMs: 20,
      });
      const written: string[] = [];
      const deadline = performance.now() + 3500;
      while (performance.now() < deadline) {
        written.push(await touchLease(leaseName));
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      await eventually(() => assert.ok(seen.records.length >= written.length, 'all records'), {
        timeoutMs: 5000,
        intervalMs: 20,
      });
      assert.ok(
        seen.events.filter((e) => e === 'ended').length >= 2,
        `ended by the server at least twice: ${seen.events.join(', ')}`,
      );
      assert.deepEqual(
        seen.records.map((r) => r?.version),
        written,
        'every write, once, in order',
      );
      const watches = readAuditEvents(cluster).filter(
        (e) =>
          e.verb === 'watch' &&
          e.user.username === cluster.identities.carol!.username &&
          Date.parse(e.requestReceivedTimestamp) >= +startedAt - 1000,
      );
      assert.ok(watches.length >= 3, `${watches.length} watch requests`);
    });
  });
});

describe('LeaderElector with a watching LeaseLock on the real kube-apiserver', () => {
  const users = ['alice', 'bob'] as const;
  const electors: LeaderElector[] = [];
  before(async () => {
    for (const user of users) {
      await grantLeaseAccess(cluster, user, ['get', 'create', 'update', 'watch']);
    }
    await grantLeaseAccess(cluster, 'dave', ['get', 'create', 'update']);
  });
  after(async () => {
    await Promise.all(electors.map((e) => e.stop()));
    for (const user of [...users, 'dave']) await revokeLeaseAccess(cluster, user);
  });

  function elector(
    identity: string,
    leaseName: string,
    options: { retryPeriodSeconds?: number; releaseOnStop?: boolean; logger?: ElectionLogger } = {},
  ) {
    const started: number[] = [];
    const e = new LeaderElector({
      lock: lockAs(identity, leaseName),
      identity,
      leaseDurationSeconds: 15,
      renewDeadlineSeconds: 10,
      retryPeriodSeconds: options.retryPeriodSeconds ?? 2,
      releaseOnStop: options.releaseOnStop ?? true,
      logger: options.logger ?? quietLogger(),
      callbacks: { onStartedLeading: () => started.push(performance.now()) },
    });
    electors.push(e);
    return { elector: e, started };
  }

  test('a watching follower sends no request in steady state and takes a released Lease at once', async () => {
    const leaseName = uniqueLeaseName('watch-follow');
    // retryPeriod 4 s: a polling follower would need up to 4.8 s to notice the release.
    const leader = elector('alice', leaseName, { retryPeriodSeconds: 4 });
    leader.elector.start();
    await eventually(() => assert.ok(leader.elector.isLeader(), 'alice leads'), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    const follower = elector('bob', leaseName, { retryPeriodSeconds: 4 });
    follower.elector.start();
    await eventually(() => assert.ok(follower.elector.leader === 'alice', 'bob follows'), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const windowStart = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    const windowEnd = Date.now();
    const bobRequests = readAuditEvents(cluster).filter((e) => {
      const at = Date.parse(e.requestReceivedTimestamp);
      return (
        e.objectRef?.name === leaseName &&
        e.user.username === cluster.identities.bob!.username &&
        at >= windowStart &&
        at < windowEnd
      );
    });
    assert.deepEqual(
      bobRequests.map((e) => e.verb),
      [],
      'no GET while alice renewed 3 times',
    );
    assert.equal(follower.elector.leader, 'alice');

    const stoppedAt = performance.now();
    await leader.elector.stop();
    await eventually(() => assert.ok(follower.elector.isLeader(), 'bob leads'), {
      timeoutMs: 5000,
      intervalMs: 20,
    });
    const handoverMs = follower.started[0]! - stoppedAt;
    console.log(`# released Lease taken after ${Math.round(handoverMs)} ms (retryPeriod 4 s)`);
    assert.ok(handoverMs < 1000, `taken ${Math.round(handoverMs)} ms after stop()`);
  });

  test('without RBAC watch the elector says so once, naming the verb, and still elects by polling', async () => {
    const leaseName = uniqueLeaseName('watch-forbidden');
    const warnings: string[] = [];
    const logger: ElectionLogger = { ...quietLogger(), warn: (m) => warnings.push(m) };
    const dave = elector('dave', leaseName, { logger });
    const alice = elector('alice', leaseName);
    alice.elector.start();
    await eventually(() => assert.ok(alice.elector.isLeader(), 'alice leads'), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    dave.elector.start();
    await eventually(() => assert.ok(dave.elector.leader === 'alice', 'dave follows'), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    await eventually(() => assert.ok(warnings.length > 0, 'a warning'), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const watchWarnings = warnings.filter((w) => w.includes('Cannot watch'));
    assert.equal(watchWarnings.length, 1, warnings.join('\n'));
    assert.match(watchWarnings[0]!, /verb watch on leases\.coordination\.k8s\.io/);
    assert.match(watchWarnings[0]!, /forbidden \(HTTP 403\)/);
    assert.match(watchWarnings[0]!, /poll/);

    await alice.elector.stop();
    await eventually(() => assert.ok(dave.elector.isLeader(), 'dave takes over by polling'), {
      timeoutMs: 2 * 2400 + 1000,
      intervalMs: 20,
    });
  });
});

function quietLogger(): ElectionLogger {
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
  };
}
