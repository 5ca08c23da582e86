/**
 * LeaseLock over HTTP against the real kube-apiserver: what it writes, what it reads back, and
 * how it classifies every way a request fails — including kubeconfigs that cannot work (wrong
 * CA, failing exec plugin, missing client certificate, http:// URL), which must be
 * `configuration` errors, not transient ones.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { rootCertificates } from 'node:tls';
import { join } from 'node:path';
import { KubeConfig, V1MicroTime, type Cluster, type User } from '@kubernetes/client-node';
import { KubernetesApiError, LeaseApiError, LockConflictError } from 'nest-leader';
import { SCHEDULE_LEDGER_ANNOTATION, LeaderElector, LeaseLock, selectLock } from 'nest-leader/core';
import { coordinationApi, getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';

const cluster = getTestCluster();
const namespace = cluster.namespace;
const admin = coordinationApi(cluster);
const at = new Date('2026-01-30T10:00:00.123Z');
const record = {
  holderIdentity: 'pod-a',
  leaseDurationSeconds: 15,
  acquireTime: at,
  renewTime: at,
  leaseTransitions: 3,
};
const silentLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** The admin kubeconfig with its current cluster and user changed by `change`. */
function adminKubeConfigWith(
  change: (cluster: Cluster, user: User) => [Cluster, User],
): KubeConfig {
  const base = new KubeConfig();
  base.loadFromFile(cluster.kubeconfigPath);
  const [changedCluster, changedUser] = change(
    { ...base.getCurrentCluster()! },
    { ...base.getCurrentUser()! },
  );
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [changedCluster],
    users: [changedUser],
    contexts: [{ name: 'test', cluster: changedCluster.name, user: changedUser.name }],
    currentContext: 'test',
  });
  return kc;
}

function lockWith(kubeConfig: KubeConfig | string, name = uniqueLeaseName('lock')): LeaseLock {
  return new LeaseLock({ kubeConfig, name, namespace, identity: 'pod-a' });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => assert.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

describe('LeaseLock against the real kube-apiserver', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'nest-leader-lease-lock-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('get of a missing Lease resolves undefined (404)', async () => {
    assert.equal(await lockWith(cluster.kubeconfigPath).get(), undefined);
  });

  test('create is accepted (MicroTimes with six digits) and reads back the same record and version', async () => {
    const lock = lockWith(cluster.kubeconfigPath);

    const version = await lock.create(record);
    const read = await lock.get();

    assert.equal(read!.version, version);
    assert.deepEqual(read!.record, record);
    const stored = await admin.readNamespacedLease({ name: lock.name, namespace });
    assert.equal(new Date(stored.spec!.renewTime!).getTime(), at.getTime());
  });

  test('reads six-digit MicroTimes written by another client to the millisecond', async () => {
    const name = uniqueLeaseName('other-client');
    await admin.createNamespacedLease({
      namespace,
      body: {
        metadata: { name, namespace },
        spec: {
          holderIdentity: 'go-client',
          leaseDurationSeconds: 15,
          renewTime: new V1MicroTime('2026-01-30T10:00:00.123Z'),
        },
      },
    });

    const read = await lockWith(cluster.kubeconfigPath, name).get();

    assert.equal(read!.record.holderIdentity, 'go-client');
    assert.equal(read!.record.renewTime!.toISOString(), '2026-01-30T10:00:00.123Z');
  });

  test('a Lease without spec reads as a free record', async () => {
    const name = uniqueLeaseName('no-spec');
    await admin.createNamespacedLease({ namespace, body: { metadata: { name, namespace } } });

    const read = await lockWith(cluster.kubeconfigPath, name).get();

    assert.deepEqual(read!.record, {
      holderIdentity: '',
      leaseDurationSeconds: 0,
      leaseTransitions: 0,
    });
  });

  test("update PUTs with the read resourceVersion and keeps others' labels and annotations", async () => {
    const lock = lockWith(cluster.kubeconfigPath);
    await lock.create(record);
    const lease = await admin.readNamespacedLease({ name: lock.name, namespace });
    lease.metadata!.labels = { app: 'billing' };
    lease.metadata!.annotations = { team: 'payments' };
    await admin.replaceNamespacedLease({ name: lock.name, namespace, body: lease });
    const read = await lock.get();

    const version = await lock.update({ ...record, holderIdentity: 'pod-b' }, read!.version);

    const stored = await admin.readNamespacedLease({ name: lock.name, namespace });
    assert.equal(stored.metadata!.resourceVersion, version);
    assert.notEqual(version, read!.version);
    assert.deepEqual(stored.metadata!.labels, { app: 'billing' });
    assert.deepEqual(stored.metadata!.annotations, { team: 'payments' });
    assert.equal(stored.spec!.holderIdentity, 'pod-b');
  });

  test('the schedule ledger is stored as the annotation nest-leader/schedule-ledger beside the others, and read back', async () => {
    const lock = lockWith(cluster.kubeconfigPath);
    const created = await lock.create({ ...record, scheduleLedger: '{"v":1,"jobs":{}}' });
    const lease = await admin.readNamespacedLease({ name: lock.name, namespace });
    lease.metadata!.annotations = { ...lease.metadata!.annotations, team: 'payments' };
    await admin.replaceNamespacedLease({ name: lock.name, namespace, body: lease });
    const read = await lock.get();
    assert.notEqual(read!.version, created);
    assert.equal(read!.record.scheduleLedger, '{"v":1,"jobs":{}}');

    const ledger = '{"v":1,"jobs":{"a":{"c":["2026-01-01T00:00:00.000Z",1]}}}';
    await lock.update({ ...read!.record, scheduleLedger: ledger }, read!.version);

    const stored = await admin.readNamespacedLease({ name: lock.name, namespace });
    assert.deepEqual(stored.metadata!.annotations, {
      team: 'payments',
      [SCHEDULE_LEDGER_ANNOTATION]: ledger,
    });
    assert.equal((await lock.get())!.record.scheduleLedger, ledger);
  });

  test('create of an existing Lease and update of a stale version reject with LockConflictError (409)', async () => {
    const lock = lockWith(cluster.kubeconfigPath);
    const first = await lock.create(record);
    // A changed record: the API server keeps the resourceVersion of a no-op write.
    await lock.update({ ...record, renewTime: new Date(at.getTime() + 1000) }, first);

    const exists = await rejection(lock.create(record));
    const stale = await rejection(lock.update(record, first));

    assert.ok(exists instanceof LockConflictError);
    assert.equal(exists.operation, 'create');
    assert.ok(stale instanceof LockConflictError);
    assert.equal(stale.operation, 'update');
  });

  test('a rejected token is unauthorized (401)', async () => {
    const kc = adminKubeConfigWith((c, u) => [c, { name: u.name, token: 'not-a-valid-token' }]);

    const error = await rejection(lockWith(kc).get());

    assert.ok(error instanceof LeaseApiError);
    assert.equal(error.kind, 'unauthorized');
    assert.equal(error.statusCode, 401);
  });

  test('create in a namespace that does not exist is not-found and says so', async () => {
    const lock = new LeaseLock({
      kubeConfig: cluster.kubeconfigPath,
      name: uniqueLeaseName('nons'),
      namespace: 'no-such-namespace',
    });

    const error = await rejection(lock.create(record));

    assert.ok(error instanceof LeaseApiError);
    assert.equal(error.kind, 'not-found');
    assert.match(error.message, /Namespace "no-such-namespace" probably does not exist/);
  });

  test('a LeaderElector on a LeaseLock acquires, renews and releases (holder cleared, duration 1 s)', async () => {
    const lock = lockWith(cluster.kubeconfigPath);
    const elector = new LeaderElector({
      lock,
      identity: 'pod-a',
      leaseDurationSeconds: 2,
      renewDeadlineSeconds: 1.5,
      retryPeriodSeconds: 0.2,
      logger: silentLogger,
    });
    elector.start();
    await eventually(() => assert.equal(elector.isLeader(), true), {
      timeoutMs: 5_000,
      intervalMs: 20,
    });
    const acquired = await admin.readNamespacedLease({ name: lock.name, namespace });
    await new Promise((r) => setTimeout(r, 700));
    const renewed = await admin.readNamespacedLease({ name: lock.name, namespace });

    await elector.stop();

    const released = await admin.readNamespacedLease({ name: lock.name, namespace });
    assert.equal(acquired.spec!.holderIdentity, 'pod-a');
    assert.ok(
      new Date(renewed.spec!.renewTime!).getTime() > new Date(acquired.spec!.renewTime!).getTime(),
      'renewTime moved while leading',
    );
    assert.equal(released.spec!.holderIdentity, '');
    assert.equal(released.spec!.leaseDurationSeconds, 1);
    assert.equal(released.spec!.leaseTransitions, acquired.spec!.leaseTransitions);
  });

  test("selectLock with 'auto' and KUBECONFIG naming the cluster's kubeconfig elects on a working Lease", async () => {
    const selected = selectLock({
      leaseName: uniqueLeaseName('auto'),
      namespace,
      environment: { env: { KUBECONFIG: cluster.kubeconfigPath }, homeDir: dir },
    });

    assert.equal(selected.kind, 'kubernetes');
    assert.equal(selected.source, 'KUBECONFIG');
    await selected.lock.create(record);
    assert.equal((await selected.lock.get())!.record.holderIdentity, 'pod-a');
  });

  describe('timeouts and unreachable servers', () => {
    let silent: Server;
    const sockets = new Set<Socket>();
    let silentUrl: string;
    before(async () => {
      // A TCP server that accepts and never answers: a hung API server.
      silent = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      silentUrl = `https://127.0.0.1:${(silent.address() as { port: number }).port}`;
    });
    after(() => {
      for (const socket of sockets) socket.destroy();
      silent.close();
    });

    test("a request that hangs is aborted by the caller's signal and classified as timeout", async () => {
      const kc = adminKubeConfigWith((c, u) => [{ ...c, server: silentUrl }, u]);

      const error = await rejection(lockWith(kc).get(AbortSignal.timeout(300)));

      assert.ok(error instanceof LeaseApiError);
      assert.equal(error.kind, 'timeout');
      assert.equal(error.transient, true);
    });

    test('requestTimeoutMs bounds a request when the caller passes no signal', async () => {
      const kc = adminKubeConfigWith((c, u) => [{ ...c, server: silentUrl }, u]);
      const lock = new LeaseLock({ kubeConfig: kc, name: 'x', namespace, requestTimeoutMs: 300 });

      const error = await rejection(lock.get());

      assert.ok(error instanceof LeaseApiError);
      assert.equal(error.kind, 'timeout');
    });

    test('a refused connection is transient, naming ECONNREFUSED', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as { port: number }).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const kc = adminKubeConfigWith((c, u) => [{ ...c, server: `https://127.0.0.1:${port}` }, u]);

      const error = await rejection(lockWith(kc).get());

      assert.ok(error instanceof LeaseApiError);
      assert.equal(error.kind, 'transient');
      assert.match(error.message, /ECONNREFUSED/);
    });
  });

  describe('kubeconfigs that cannot work are configuration errors, not transient', () => {
    async function configurationError(kc: KubeConfig): Promise<KubernetesApiError> {
      const error = await rejection(lockWith(kc).get(AbortSignal.timeout(10_000)));
      assert.ok(error instanceof LeaseApiError, String(error));
      assert.equal(error.kind, 'configuration', error.message);
      assert.equal(error.transient, false);
      assert.match(error.message, /^Cannot get leases\.coordination\.k8s\.io ".*" in namespace/);
      return error;
    }

    test('a CA that did not sign the server certificate: names the TLS code and the CA setting', async () => {
      // A real CA that did not sign the API server's certificate: Node's first bundled root.
      const otherCa = join(dir, 'other-ca.crt');
      writeFileSync(otherCa, rootCertificates[0]!);
      const kc = adminKubeConfigWith((c, u) => [{ ...c, caData: undefined, caFile: otherCa }, u]);

      const error = await configurationError(kc);

      assert.match(
        error.message,
        /TLS certificate was not accepted \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\)/,
      );
      assert.match(error.message, /certificate-authority/);
    });

    test('an exec credential plugin that exits 1: names the plugin and shows its stderr', async () => {
      const kc = adminKubeConfigWith((c, u) => [
        c,
        {
          name: u.name,
          exec: {
            command: 'sh',
            args: ['-c', 'echo "token refresh denied" >&2; exit 1'],
            apiVersion: 'client.authentication.k8s.io/v1',
          },
        } as User,
      ]);

      const error = await configurationError(kc);

      assert.match(error.message, /exec credential plugin/);
      assert.match(error.message, /Cause: token refresh denied\.$/);
    });

    test('an exec credential plugin whose command does not exist', async () => {
      const kc = adminKubeConfigWith((c, u) => [
        c,
        {
          name: u.name,
          exec: {
            command: join(dir, 'no-such-plugin'),
            args: [],
            apiVersion: 'client.authentication.k8s.io/v1',
          },
        } as User,
      ]);

      const error = await configurationError(kc);

      assert.match(error.message, /exec credential plugin/);
      assert.match(error.message, /ENOENT/);
    });

    test('a client certificate file that does not exist: names the file', async () => {
      const missing = join(dir, 'missing-client.crt');
      const kc = adminKubeConfigWith((c, u) => [
        c,
        {
          ...u,
          certData: undefined,
          keyData: undefined,
          certFile: missing,
          keyFile: `${missing}.key`,
        },
      ]);

      const error = await configurationError(kc);

      assert.match(error.message, new RegExp(`names a file that cannot be read: ${missing}`));
    });

    test('an http:// server URL: refused by client-node without insecure-skip-tls-verify', async () => {
      const kc = adminKubeConfigWith((c, u) => [
        { ...c, server: c.server.replace('https:', 'http:') },
        u,
      ]);

      const error = await configurationError(kc);

      assert.match(error.message, /server URL is http:\/\/ .* use the https:\/\/ URL/);
    });

    test('an http:// server URL with insecure-skip-tls-verify: the HTTPS port answers 400 in plain text', async () => {
      const kc = adminKubeConfigWith((c, u) => [
        { ...c, server: c.server.replace('https:', 'http:'), skipTLSVerify: true },
        u,
      ]);

      const error = await configurationError(kc);

      assert.equal(error.statusCode, 400);
      assert.match(error.message, /speaks HTTPS on that port: use https:\/\//);
    });
  });
});
