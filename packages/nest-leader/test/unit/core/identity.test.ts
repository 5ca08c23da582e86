import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { resolveIdentity, resolveNamespace } from 'nest-leader/core';

function kubeConfigWithNamespace(namespace: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u', namespace }],
    currentContext: 'ctx',
  });
  return kc;
}

describe('resolveIdentity', () => {
  test('uses POD_NAME when set', () => {
    assert.equal(resolveIdentity({ POD_NAME: 'billing-7d9f-abcde' }), 'billing-7d9f-abcde');
  });

  test('falls back to hostname-pid', () => {
    assert.equal(resolveIdentity({}), `${hostname()}-${process.pid}`);
    assert.equal(resolveIdentity({ POD_NAME: '  ' }), `${hostname()}-${process.pid}`);
  });
});

describe('resolveNamespace', () => {
  const saFile = join(mkdtempSync(join(tmpdir(), 'nest-leader-ns-')), 'namespace');
  writeFileSync(saFile, 'from-service-account\n');
  const missing = join(tmpdir(), 'nest-leader-no-such-file');

  test('the explicit option wins', () => {
    const ns = resolveNamespace({
      namespace: 'explicit',
      env: { POD_NAMESPACE: 'env' },
      serviceAccountNamespacePath: saFile,
    });
    assert.equal(ns, 'explicit');
  });

  test('then POD_NAMESPACE', () => {
    const ns = resolveNamespace({
      env: { POD_NAMESPACE: 'env' },
      serviceAccountNamespacePath: saFile,
    });
    assert.equal(ns, 'env');
  });

  test('then the service-account namespace file', () => {
    const ns = resolveNamespace({
      env: {},
      serviceAccountNamespacePath: saFile,
      kubeConfig: kubeConfigWithNamespace('ctx-ns'),
    });
    assert.equal(ns, 'from-service-account');
  });

  test("then the kubeconfig context's namespace", () => {
    const ns = resolveNamespace({
      env: {},
      serviceAccountNamespacePath: missing,
      kubeConfig: kubeConfigWithNamespace('ctx-ns'),
    });
    assert.equal(ns, 'ctx-ns');
  });

  test("else 'default'", () => {
    assert.equal(resolveNamespace({ env: {}, serviceAccountNamespacePath: missing }), 'default');
  });
});
