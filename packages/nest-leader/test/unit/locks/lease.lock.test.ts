import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import {
  InvalidLeaderElectionOptionError,
  LeaderElector,
  LeaseApiError,
  LeaseLock,
  LockConflictError,
} from 'nest-leader';
import { FakeApiServer, status } from './fake-api-server.fixture.js';

const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const at = new Date('2026-01-30T10:00:00.123Z');
const record = {
  holderIdentity: 'pod-a',
  leaseDurationSeconds: 15,
  acquireTime: at,
  renewTime: at,
  leaseTransitions: 3,
};

describe('LeaseLock', () => {
  let server: FakeApiServer;
  let lock: LeaseLock;
  before(async () => (server = await new FakeApiServer().start()));
  after(() => server.close());
  beforeEach(() => {
    server.leases.clear();
    server.requests.length = 0;
    lock = new LeaseLock({
      kubeConfig: server.kubeConfig(),
      name: 'billing-worker',
      namespace: 'prod',
      identity: 'pod-a',
    });
  });

  async function rejection(promise: Promise<unknown>): Promise<unknown> {
    return promise.then(
      () => assert.fail('expected a rejection'),
      (error: unknown) => error,
    );
  }

  test('describes itself as "Lease <namespace>/<name>"', () => {
    assert.equal(lock.description, 'Lease prod/billing-worker');
  });

  test('get of a missing Lease resolves undefined (404)', async () => {
    assert.equal(await lock.get(), undefined);
  });

  test('create writes MicroTimes with exactly six fractional digits', async () => {
    await lock.create(record);

    const body = server.requests[0]!.body as { spec: Record<string, unknown>; metadata: object };
    assert.equal(server.requests[0]!.method, 'POST');
    assert.match(body.spec.acquireTime as string, MICRO_TIME);
    assert.equal(body.spec.renewTime, '2026-01-30T10:00:00.123000Z');
    assert.deepEqual(body.metadata, { name: 'billing-worker', namespace: 'prod' });
    assert.equal(body.spec.holderIdentity, 'pod-a');
    assert.equal(body.spec.leaseDurationSeconds, 15);
    assert.equal(body.spec.leaseTransitions, 3);
  });

  test('reads back what it wrote: times as Dates, the resourceVersion as version', async () => {
    const version = await lock.create(record);

    const read = await lock.get();

    assert.equal(read!.version, version);
    assert.deepEqual(read!.record, record);
  });

  test('parses six-digit MicroTimes written by other clients', async () => {
    server.put('prod', 'billing-worker', {
      spec: {
        holderIdentity: 'go-client',
        renewTime: '2026-01-30T10:00:00.123456Z',
        leaseDurationSeconds: 15,
      },
    });

    const read = await lock.get();

    assert.equal(read!.record.renewTime!.toISOString(), '2026-01-30T10:00:00.123Z');
    assert.equal(read!.record.holderIdentity, 'go-client');
  });

  test('a Lease without spec reads as a free record with defaults', async () => {
    server.put('prod', 'billing-worker', {});

    const read = await lock.get();

    assert.deepEqual(read!.record, {
      holderIdentity: '',
      leaseDurationSeconds: 0,
      leaseTransitions: 0,
    });
  });

  test('garbage in spec never throws', async () => {
    server.put('prod', 'billing-worker', {
      spec: {
        holderIdentity: 42,
        renewTime: 'yesterday',
        leaseDurationSeconds: 'long',
        leaseTransitions: null,
      },
    });

    const read = await lock.get();

    assert.deepEqual(read!.record, {
      holderIdentity: '',
      leaseDurationSeconds: 0,
      leaseTransitions: 0,
    });
  });

  test('update PUTs the last object read with its resourceVersion, keeping labels and annotations', async () => {
    server.put('prod', 'billing-worker', {
      metadata: { labels: { app: 'billing' }, annotations: { team: 'payments' } },
      spec: { holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 1 },
    });
    const read = await lock.get();

    const version = await lock.update(
      { ...record, strategy: 'OldestEmulationVersion' },
      read!.version,
    );

    const put = server.requests.at(-1)!;
    const metadata = put.body!.metadata as Record<string, unknown>;
    assert.equal(put.method, 'PUT');
    assert.equal(metadata.resourceVersion, read!.version);
    assert.deepEqual(metadata.labels, { app: 'billing' });
    assert.deepEqual(metadata.annotations, { team: 'payments' });
    assert.equal((put.body!.spec as Record<string, unknown>).strategy, 'OldestEmulationVersion');
    assert.notEqual(version, read!.version);
  });

  test('create of an existing Lease rejects with LockConflictError (409 AlreadyExists)', async () => {
    await lock.create(record);
    assert.ok((await rejection(lock.create(record))) instanceof LockConflictError);
  });

  test('update with a stale version rejects with LockConflictError (409 Conflict)', async () => {
    const first = await lock.create(record);
    await lock.update(record, first);

    const error = await rejection(lock.update(record, first));

    assert.ok(error instanceof LockConflictError);
    assert.equal(error.operation, 'update');
  });

  test('403 rejects with a forbidden LeaseApiError naming verb, resource, namespace and the fix', async () => {
    const message =
      'leases.coordination.k8s.io "billing-worker" is forbidden: User "system:serviceaccount:prod:default" cannot update resource "leases"';
    server.respondNext({ status: 403, body: status(403, 'Forbidden', message) });

    const error = await rejection(lock.update(record, '1'));

    assert.ok(error instanceof LeaseApiError);
    assert.equal(error.kind, 'forbidden');
    assert.equal(error.statusCode, 403);
    assert.equal(error.verb, 'update');
    assert.equal(error.transient, false);
    assert.match(
      error.message,
      /^Cannot update leases\.coordination\.k8s\.io "billing-worker" in namespace "prod" as candidate "pod-a"/,
    );
    assert.match(error.message, /verbs get, create and update/);
    assert.match(error.message, /cannot update resource "leases"/);
  });

  const statuses: Array<[number, string]> = [
    [401, 'unauthorized'],
    [422, 'invalid'],
    [400, 'invalid'],
    [429, 'transient'],
    [500, 'transient'],
    [503, 'transient'],
  ];
  for (const [code, kind] of statuses) {
    test(`HTTP ${code} on get is classified as ${kind}`, async () => {
      server.respondNext({ status: code, body: status(code, 'X', `status ${code}`) });

      const error = await rejection(lock.get());

      assert.ok(error instanceof LeaseApiError);
      assert.equal(error.kind, kind);
      assert.equal(error.statusCode, code);
    });
  }

  test('404 on create (missing namespace) says so', async () => {
    server.respondNext({
      status: 404,
      body: status(404, 'NotFound', 'namespaces "prod" not found'),
    });

    const error = await rejection(lock.create(record));

    assert.ok(error instanceof LeaseApiError);
    assert.equal(error.kind, 'not-found');
    assert.match(error.message, /Namespace "prod" probably does not exist/);
  });

  test('a 400 for a malformed MicroTime is what a plain Date would get (guard of the fake server)', async () => {
    const kc = server.kubeConfig();
    const raw = await fetch(`${server.url}/apis/coordination.k8s.io/v1/namespaces/prod/leases`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'raw' }, spec: { renewTime: new Date() } }),
    });
    assert.equal(raw.status, 400);
    assert.ok(kc);
  });

  test("a request that hangs is aborted by the caller's signal and classified as timeout", async () => {
    server.respondNext('hang');

    const error = await rejection(lock.get(AbortSignal.timeout(100)));

    assert.ok(error instanceof LeaseApiError);
    assert.equal(error.kind, 'timeout');
    assert.equal(error.transient, true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(server.abandoned, 1);
  });

  test('requestTimeoutMs bounds a request when the caller passes no signal', async () => {
    const quick = new LeaseLock({
      kubeConfig: server.kubeConfig(),
      name: 'x',
      namespace: 'prod',
      requestTimeoutMs: 100,
    });
    server.respondNext('hang');

    const error = await rejection(quick.get());

    assert.ok(error instanceof LeaseApiError);
    assert.equal(error.kind, 'timeout');
  });

  test('a refused connection is transient', async () => {
    const closed = await new FakeApiServer().start();
    const url = closed.url;
    await closed.close();
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const unreachable = new LeaseLock({ kubeConfig: kc, name: 'x', namespace: 'prod' });

    const error = await rejection(unreachable.get());

    assert.ok(error instanceof LeaseApiError);
    assert.equal(error.kind, 'transient');
    assert.match(error.message, /Cause: fetch failed \(ECONNREFUSED\)/);
  });

  test('rejects an invalid name, an invalid namespace and a kubeconfig without cluster', () => {
    const kubeConfig = server.kubeConfig();
    const invalid = (option: string) => (error: unknown) =>
      error instanceof InvalidLeaderElectionOptionError && error.option === option;
    assert.throws(
      () => new LeaseLock({ kubeConfig, name: 'Billing_Worker', namespace: 'prod' }),
      invalid('name'),
    );
    assert.throws(
      () => new LeaseLock({ kubeConfig, name: 'a'.repeat(254), namespace: 'prod' }),
      invalid('name'),
    );
    assert.throws(
      () => new LeaseLock({ kubeConfig, name: 'ok', namespace: 'prod.eu' }),
      invalid('namespace'),
    );
    assert.throws(
      () => new LeaseLock({ kubeConfig: new KubeConfig(), name: 'ok', namespace: 'prod' }),
      invalid('kubeConfig'),
    );
  });

  test('a LeaderElector on a LeaseLock acquires, renews and releases over HTTP', async () => {
    const elector = new LeaderElector({
      lock,
      identity: 'pod-a',
      leaseDurationSeconds: 2,
      renewDeadlineSeconds: 1.5,
      retryPeriodSeconds: 0.1,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    elector.start();
    for (let i = 0; i < 50 && !elector.isLeader(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(elector.isLeader(), true);
    await new Promise((r) => setTimeout(r, 350));

    await elector.stop();

    const methods = server.requests.map((r) => r.method);
    assert.deepEqual(methods.slice(0, 2), ['GET', 'POST']);
    assert.ok(methods.filter((m) => m === 'PUT').length >= 3, methods.join(','));
    const spec = server.leases.get('prod/billing-worker')!.spec as Record<string, unknown>;
    assert.equal(spec.holderIdentity, '');
    assert.equal(spec.leaseDurationSeconds, 1);
    assert.equal(spec.leaseTransitions, 0);
    assert.match(spec.renewTime as string, MICRO_TIME);
  });
});
