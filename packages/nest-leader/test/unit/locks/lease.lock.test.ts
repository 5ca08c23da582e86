import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError, LeaseLock, parseLeaseRecord } from 'nest-leader';

/** A kubeconfig with a current cluster; nothing listens there (constructors do no I/O). */
function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: false }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const invalid = (option: string) => (error: unknown) =>
  error instanceof InvalidLeaderElectionOptionError && error.option === option;

// What LeaseLock does over HTTP is tested against the real kube-apiserver:
// test/integration/lease-lock.test.ts.
describe('LeaseLock construction', () => {
  test('describes itself as "Lease <namespace>/<name>"', () => {
    const lock = new LeaseLock({
      kubeConfig: kubeConfig(),
      name: 'billing-worker',
      namespace: 'prod',
    });
    assert.equal(lock.description, 'Lease prod/billing-worker');
  });

  test('rejects an invalid name or namespace, naming the option', () => {
    const kc = kubeConfig();
    assert.throws(
      () => new LeaseLock({ kubeConfig: kc, name: 'Billing_Worker', namespace: 'prod' }),
      invalid('name'),
    );
    assert.throws(
      () => new LeaseLock({ kubeConfig: kc, name: 'a'.repeat(254), namespace: 'prod' }),
      invalid('name'),
    );
    assert.throws(
      () => new LeaseLock({ kubeConfig: kc, name: 'ok', namespace: 'prod.eu' }),
      invalid('namespace'),
    );
  });

  test('rejects a kubeconfig without a current cluster and a non-positive requestTimeoutMs', () => {
    assert.throws(
      () => new LeaseLock({ kubeConfig: new KubeConfig(), name: 'ok', namespace: 'prod' }),
      invalid('kubeConfig'),
    );
    assert.throws(
      () =>
        new LeaseLock({
          kubeConfig: kubeConfig(),
          name: 'ok',
          namespace: 'prod',
          requestTimeoutMs: 0,
        }),
      invalid('requestTimeoutMs'),
    );
  });
});

describe('parseLeaseRecord (what LeaseLock makes of a Lease spec)', () => {
  test('a Lease without spec reads as a free record with defaults', () => {
    assert.deepEqual(parseLeaseRecord({}), {
      holderIdentity: '',
      leaseDurationSeconds: 0,
      leaseTransitions: 0,
    });
  });

  test('garbage in the fields never throws', () => {
    const record = parseLeaseRecord({
      holderIdentity: 42,
      renewTime: 'yesterday',
      leaseDurationSeconds: 'long',
      leaseTransitions: null,
    });
    assert.deepEqual(record, { holderIdentity: '', leaseDurationSeconds: 0, leaseTransitions: 0 });
  });

  test('six-digit MicroTimes written by other clients parse to the millisecond', () => {
    const record = parseLeaseRecord({ renewTime: '2026-01-30T10:00:00.123456Z' });
    assert.equal(record.renewTime!.toISOString(), '2026-01-30T10:00:00.123Z');
  });
});
