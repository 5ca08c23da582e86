import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, test } from 'node:test';
import { InvalidLeaderElectionOptionError, KubeConfigError } from 'nest-leader';
import {
  ConfigMapLock,
  FileLock,
  type KubernetesEnvironment,
  LeaseLock,
  LOCK_KINDS,
  type LockSelectionOptions,
  selectLock,
} from 'nest-leader/core';
import { MemoryLock } from 'nest-leader/testing';

const KUBECONFIG_YAML = [
  'apiVersion: v1',
  'kind: Config',
  'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]',
  'users: [{ name: u, user: { token: t } }]',
  'contexts: [{ name: x, context: { cluster: c, user: u, namespace: billing } }]',
  'current-context: x',
  '',
].join('\n');

let dir: string;
/** A machine with no Kubernetes configuration at all, unless a test adds some. */
let environment: Required<KubernetesEnvironment>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'nest-leader-selection-'));
  environment = {
    env: {},
    homeDir: join(dir, 'home'),
    serviceAccountTokenPath: join(dir, 'serviceaccount', 'token'),
  };
});

function select(options: Partial<LockSelectionOptions> = {}) {
  return selectLock({ leaseName: 'jobs', identity: 'pod-a', environment, ...options });
}

function write(path: string, text: string): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  assert.fail('expected an error');
}

describe("lock 'auto'", () => {
  test('with no Kubernetes configuration at all: a FileLock, and a notice that says so', () => {
    const selected = select();

    assert.ok(selected.lock instanceof FileLock);
    assert.equal(selected.kind, 'file');
    assert.match(selected.notice!, /^No Kubernetes cluster configured .*FileLock/);
  });

  for (const [runner, variable, value] of [
    ['Jest', 'JEST_WORKER_ID', '1'],
    ['Vitest', 'VITEST', 'true'],
  ] as const) {
    test(`under ${runner} (${variable}) with no Kubernetes configuration: a MemoryLock private to the process, and a notice naming lock: 'file'`, () => {
      environment.env = { [variable]: value };

      const selected = select();

      assert.ok(selected.lock instanceof MemoryLock);
      assert.equal(selected.kind, 'memory');
      assert.match(
        selected.notice!,
        new RegExp(`running under ${runner}: electing on a memory lock`),
      );
      assert.match(selected.notice!, /Set lock: 'file' to share the file lock/);
    });
  }

  test('under a test runner with a Kubernetes configuration: still a Lease', () => {
    environment.env = {
      JEST_WORKER_ID: '1',
      KUBECONFIG: write(join(dir, 'kubeconfig'), KUBECONFIG_YAML),
    };

    assert.ok(select().lock instanceof LeaseLock);
  });

  test('a kubeconfig named by KUBECONFIG: a Lease in the context namespace', () => {
    environment.env.KUBECONFIG = write(join(dir, 'kubeconfig'), KUBECONFIG_YAML);

    const selected = select();

    assert.ok(selected.lock instanceof LeaseLock);
    assert.equal(selected.kind, 'kubernetes');
    assert.equal(selected.namespace, 'billing');
    assert.equal(selected.source, 'KUBECONFIG');
    assert.equal(selected.notice, undefined);
  });

  test('~/.kube/config: a Lease', () => {
    write(join(environment.homeDir, '.kube', 'config'), KUBECONFIG_YAML);

    assert.ok(select().lock instanceof LeaseLock);
  });

  test('KUBECONFIG naming a missing file is an error naming the variable and the file, not a fallback', () => {
    const missing = join(dir, 'nope.yaml');
    environment.env.KUBECONFIG = missing;

    const error = thrown(() => select());

    assert.ok(error instanceof KubeConfigError);
    assert.equal(error.source, 'KUBECONFIG');
    assert.equal(error.path, missing);
    assert.match(
      error.message,
      /^The kubeconfig named by KUBECONFIG \(.*nope\.yaml\) does not exist\./,
    );
    assert.match(error.message, /will not fall back to a single-host file lock/);
  });

  test('a kubeconfig without current-context is an error naming the file, even with a valid cluster', () => {
    const path = write(
      join(environment.homeDir, '.kube', 'config'),
      KUBECONFIG_YAML.replace('current-context: x', ''),
    );

    const error = thrown(() => select());

    assert.ok(error instanceof KubeConfigError);
    assert.equal(error.source, '~/.kube/config');
    assert.match(error.message, new RegExp(`^The kubeconfig ${path} has no current-context`));
  });

  test('a current-context that names no defined context, or a context naming no cluster, is an error', () => {
    environment.env.KUBECONFIG = write(
      join(dir, 'a'),
      KUBECONFIG_YAML.replace('current-context: x', 'current-context: y'),
    );
    assert.match(String(thrown(() => select())), /has current-context "y", which is not defined/);

    environment.env.KUBECONFIG = write(
      join(dir, 'b'),
      KUBECONFIG_YAML.replace('context: { cluster: c,', 'context: { cluster: gone,'),
    );
    assert.match(String(thrown(() => select())), /naming cluster "gone", which is not defined/);
  });

  test('a kubeconfig that is YAML garbage or empty is an error naming the file', () => {
    environment.env.KUBECONFIG = write(join(dir, 'garbage'), 'clusters: [unclosed\n  - : :');
    const garbage = thrown(() => select());
    assert.ok(garbage instanceof KubeConfigError);
    assert.match(garbage.message, /garbage\) is not valid YAML: .+ \(line \d+, column \d+\)\./);

    environment.env.KUBECONFIG = write(join(dir, 'empty'), '  \n');
    assert.match(String(thrown(() => select())), /empty\) is empty\./);
  });

  test('KUBECONFIG lists several files: missing ones are skipped (as kubectl), all missing is an error', () => {
    const good = write(join(dir, 'good'), KUBECONFIG_YAML);
    environment.env.KUBECONFIG = [join(dir, 'missing'), good].join(':');
    assert.ok(select().lock instanceof LeaseLock);

    environment.env.KUBECONFIG = [join(dir, 'm1'), join(dir, 'm2')].join(':');
    assert.match(String(thrown(() => select())), /names only files that do not exist: .*m1, .*m2/);
  });

  test('KUBERNETES_SERVICE_HOST without a ServiceAccount token is an error (a pod), not a fallback', () => {
    environment.env.KUBERNETES_SERVICE_HOST = '10.96.0.1';
    environment.env.KUBERNETES_SERVICE_PORT = '443';

    const error = thrown(() => select());

    assert.ok(error instanceof KubeConfigError);
    assert.equal(error.source, 'in-cluster');
    assert.match(
      error.message,
      /KUBERNETES_SERVICE_HOST set .* no ServiceAccount token at .*token/,
    );
    assert.match(error.message, /automountServiceAccountToken/);
  });

  test('a ServiceAccount token without KUBERNETES_SERVICE_HOST is an error, not a fallback', () => {
    write(environment.serviceAccountTokenPath, 'token');

    const error = thrown(() => select());

    assert.ok(error instanceof KubeConfigError);
    assert.match(error.message, /ServiceAccount token at .* but KUBERNETES_SERVICE_HOST/);
  });

  test('in-cluster credentials mean a Lease, even when ~/.kube/config is unusable', () => {
    write(environment.serviceAccountTokenPath, 'token');
    write(join(environment.homeDir, '.kube', 'config'), 'garbage: [');
    const saved = { ...process.env };
    // loadFromCluster() reads the host and port from process.env.
    process.env.KUBERNETES_SERVICE_HOST = environment.env.KUBERNETES_SERVICE_HOST = '10.96.0.1';
    process.env.KUBERNETES_SERVICE_PORT = environment.env.KUBERNETES_SERVICE_PORT = '443';
    try {
      const selected = select({ namespace: 'prod' });

      assert.ok(selected.lock instanceof LeaseLock);
      assert.equal(selected.source, 'in-cluster');
      assert.equal(selected.lock.description, 'Lease prod/jobs');
    } finally {
      process.env = saved;
    }
  });
});

describe("lock 'kubernetes'", () => {
  test('with no configuration at all, fails naming the lock option', () => {
    const error = thrown(() => select({ lock: 'kubernetes' }));

    assert.ok(error instanceof InvalidLeaderElectionOptionError);
    assert.equal(error.option, 'lock');
    assert.match(error.rule, /needs a cluster/);
  });
});

describe("lock 'configmap'", () => {
  test('a ConfigMapLock on ConfigMap leaseName in the context namespace', () => {
    environment.env.KUBECONFIG = write(join(dir, 'kc.yaml'), KUBECONFIG_YAML);

    const selected = select({ lock: 'configmap' });

    assert.ok(selected.lock instanceof ConfigMapLock);
    assert.equal(selected.kind, 'configmap');
    assert.equal(selected.lock.description, 'ConfigMap billing/jobs');
  });

  test('with no configuration at all, fails naming the lock option and the kind', () => {
    const error = thrown(() => select({ lock: 'configmap' }));

    assert.ok(error instanceof InvalidLeaderElectionOptionError);
    assert.equal(error.option, 'lock');
    assert.match(error.rule, /'configmap' needs a cluster/);
  });
});

describe('the kubeConfig option', () => {
  test('a path string is loaded: a Lease in its context namespace', () => {
    const path = write(join(dir, 'kc.yaml'), KUBECONFIG_YAML);

    const selected = select({ kubeConfig: path });

    assert.ok(selected.lock instanceof LeaseLock);
    assert.equal(selected.namespace, 'billing');
    assert.equal(selected.source, 'kubeConfig option');
  });

  test('a path to a missing or unusable file is an InvalidLeaderElectionOptionError naming kubeConfig', () => {
    const missing = thrown(() => select({ kubeConfig: join(dir, 'missing.yaml') }));
    assert.ok(missing instanceof InvalidLeaderElectionOptionError);
    assert.equal(missing.option, 'kubeConfig');
    assert.match(missing.rule, /that file does not exist$/);

    const noContext = write(join(dir, 'kc'), KUBECONFIG_YAML.replace('current-context: x', ''));
    assert.match(String(thrown(() => select({ kubeConfig: noContext }))), /no current-context/);
  });

  test('a plain object (not a KubeConfig) is an InvalidLeaderElectionOptionError naming kubeConfig, not a TypeError', () => {
    const plain = { clusters: [], users: [], contexts: [], currentContext: 'x' };

    const error = thrown(() => select({ kubeConfig: plain as never }));

    assert.ok(error instanceof InvalidLeaderElectionOptionError);
    assert.equal(error.option, 'kubeConfig');
    assert.match(error.rule, /must be a KubeConfig from @kubernetes\/client-node .* or the path/);
  });

  test('is used by LeaseLock directly too: a path string loads, a plain object is rejected', () => {
    const path = write(join(dir, 'kc.yaml'), KUBECONFIG_YAML);
    assert.equal(
      new LeaseLock({ kubeConfig: path, name: 'a', namespace: 'b' }).description,
      'Lease b/a',
    );
    assert.throws(
      () => new LeaseLock({ kubeConfig: {} as never, name: 'a', namespace: 'b' }),
      (error) => error instanceof InvalidLeaderElectionOptionError && error.option === 'kubeConfig',
    );
  });
});

describe('the lock option', () => {
  test("'file' and 'memory' build their locks", () => {
    assert.ok(select({ lock: 'file' }).lock instanceof FileLock);
    assert.ok(select({ lock: 'memory' }).lock instanceof MemoryLock);
  });

  test("explicit 'file' keeps its meaning under a test runner", () => {
    environment.env = { JEST_WORKER_ID: '1', VITEST: 'true' };

    const selected = select({ lock: 'file' });

    assert.ok(selected.lock instanceof FileLock);
    assert.equal(selected.notice, undefined);
  });

  test("kubeConfig given with lock 'file' or 'memory' is reported as ignored", () => {
    assert.equal(select({ lock: 'file' }).notice, undefined);
    assert.match(
      select({ lock: 'memory', kubeConfig: '/etc/kube/config' }).notice!,
      /kubeConfig option is ignored: lock 'memory'/,
    );
  });

  test('a ResourceLock object is used as is', () => {
    const lock = new MemoryLock({ name: 'mine' });

    const selected = select({ lock });

    assert.equal(selected.lock, lock);
    assert.equal(selected.kind, 'custom');
  });

  test('an unknown kind or an object that is not a ResourceLock fails listing every kind of the table', () => {
    for (const bad of ['lease', { get() {} }, 'toString']) {
      const error = thrown(() => select({ lock: bad as never }));
      assert.ok(error instanceof InvalidLeaderElectionOptionError, String(bad));
      assert.equal(error.option, 'lock');
      for (const kind of Object.keys(LOCK_KINDS)) assert.match(error.rule, new RegExp(`'${kind}'`));
    }
  });
});
