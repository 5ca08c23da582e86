import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidLeaderElectionOptionError } from 'nest-leader';
import { validateLeaseName, validateNamespace } from '../../../dist/esm/kubernetes/names.js';

describe('Kubernetes name validation', () => {
  for (const name of [
    'billing-worker',
    'a',
    'leader.billing.example.com',
    '0abc',
    'a'.repeat(253),
  ]) {
    test(`accepts Lease name ${name.slice(0, 30)}`, () => {
      assert.equal(validateLeaseName(name), name);
    });
  }
  for (const name of [
    '',
    'Billing',
    'under_score',
    '-lead',
    'trail-',
    'a..b',
    'a'.repeat(254),
    42,
  ]) {
    test(`rejects Lease name ${String(name).slice(0, 30) || '(empty)'}`, () => {
      assert.throws(
        () => validateLeaseName(name, 'leaseName'),
        (e: unknown) =>
          e instanceof InvalidLeaderElectionOptionError &&
          e.option === 'leaseName' &&
          /DNS-1123 subdomain/.test(e.rule),
      );
    });
  }
  for (const ns of ['default', 'kube-system', 'a1', 'a'.repeat(63)]) {
    test(`accepts namespace ${ns.slice(0, 30)}`, () => {
      assert.equal(validateNamespace(ns), ns);
    });
  }
  for (const ns of ['', 'Prod', 'prod.eu', '-x', 'a'.repeat(64)]) {
    test(`rejects namespace ${ns.slice(0, 30) || '(empty)'}`, () => {
      assert.throws(
        () => validateNamespace(ns),
        (e: unknown) =>
          e instanceof InvalidLeaderElectionOptionError &&
          e.option === 'namespace' &&
          /DNS-1123 label/.test(e.rule),
      );
    });
  }
});
