import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidLeaderElectionOptionError } from 'nest-leader';
import {
  LeaseCandidateRegistration,
  type LeaseCandidateRegistrationOptions,
} from 'nest-leader/core';
import { unreachableKubeConfig } from './kube-config.fixture.js';

const kubeConfig = unreachableKubeConfig;

const base = (): LeaseCandidateRegistrationOptions => ({
  kubeConfig: kubeConfig(),
  namespace: 'billing',
  leaseName: 'billing-worker',
  identity: 'billing-worker-7d9f-x2kq',
  binaryVersion: '1.4.2',
});

const invalid = (option: string) => (error: unknown) =>
  error instanceof InvalidLeaderElectionOptionError && error.option === option;

// What it does over HTTP is tested against the real kube-apiserver with the
// CoordinatedLeaderElection gate: test/integration/coordinated-election.test.ts.
describe('LeaseCandidateRegistration construction', () => {
  test('is named after the identity, in the Lease namespace', () => {
    const registration = new LeaseCandidateRegistration(base());
    assert.equal(registration.description, 'LeaseCandidate billing/billing-worker-7d9f-x2kq');
    assert.equal(registration.identity, 'billing-worker-7d9f-x2kq');
    assert.equal(registration.leaseName, 'billing-worker');
  });

  test('rejects an identity the API server refuses as a LeaseCandidate name', () => {
    for (const identity of ['', 'host:1234', 'a b', 'x'.repeat(254)]) {
      assert.throws(
        () => new LeaseCandidateRegistration({ ...base(), identity }),
        invalid('identity'),
        identity,
      );
    }
  });

  test('rejects versions that are not strict semantic versions, and an emulation above the binary', () => {
    for (const binaryVersion of ['v1.4.2', '1.4', '01.4.2', '']) {
      assert.throws(
        () => new LeaseCandidateRegistration({ ...base(), binaryVersion }),
        invalid('binaryVersion'),
        binaryVersion,
      );
    }
    assert.throws(
      () => new LeaseCandidateRegistration({ ...base(), emulationVersion: '1.4' }),
      invalid('emulationVersion'),
    );
    assert.throws(
      () => new LeaseCandidateRegistration({ ...base(), emulationVersion: '1.5.0' }),
      invalid('emulationVersion'),
    );
    assert.doesNotThrow(
      () =>
        new LeaseCandidateRegistration({
          ...base(),
          binaryVersion: '1.10.0-rc.1+build.5',
          emulationVersion: '1.9.3',
        }),
    );
  });

  test('rejects a non-positive interval, an empty strategy and a bad namespace or Lease name', () => {
    assert.throws(
      () => new LeaseCandidateRegistration({ ...base(), pingCheckIntervalMs: 0 }),
      invalid('pingCheckIntervalMs'),
    );
    assert.throws(
      () => new LeaseCandidateRegistration({ ...base(), renewIntervalMs: Number.NaN }),
      invalid('renewIntervalMs'),
    );
    assert.throws(
      () => new LeaseCandidateRegistration({ ...base(), strategy: '' }),
      invalid('strategy'),
    );
    assert.throws(
      () => new LeaseCandidateRegistration({ ...base(), namespace: 'Billing' }),
      invalid('namespace'),
    );
    assert.throws(
      () => new LeaseCandidateRegistration({ ...base(), leaseName: 'Billing_Worker' }),
      invalid('leaseName'),
    );
  });
});
