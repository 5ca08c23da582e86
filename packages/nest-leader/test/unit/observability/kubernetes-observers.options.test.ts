import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError } from 'nest-leader';
import {
  DEFAULT_ROLE_LABEL_KEY,
  LeaseEventsObserver,
  PodRoleLabelObserver,
} from 'nest-leader/observability';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromOptions({
  clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
  users: [{ name: 'u' }],
  contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
  currentContext: 'x',
});

function rejectsOption(build: () => unknown, option: string): void {
  assert.throws(build, (error: unknown) => {
    assert.ok(error instanceof InvalidLeaderElectionOptionError, String(error));
    assert.equal(error.option, option);
    return true;
  });
}

describe('LeaseEventsObserver options', () => {
  const base = { kubeConfig, namespace: 'shop', leaseName: 'billing' };

  it('accepts a qualified reportingController, with or without a DNS prefix', () => {
    new LeaseEventsObserver(base);
    new LeaseEventsObserver({ ...base, reportingController: 'example.com/billing-worker' });
  });

  it('refuses a reportingController the API server would reject, naming the option', () => {
    for (const bad of ['', 'Not Valid', 'Example.com/x', '/x', 'x/', 'a'.repeat(64)]) {
      rejectsOption(
        () => new LeaseEventsObserver({ ...base, reportingController: bad }),
        'reportingController',
      );
    }
  });

  it('refuses an invalid Lease name or namespace, and a non-positive timeout', () => {
    rejectsOption(() => new LeaseEventsObserver({ ...base, leaseName: 'Bad_Name' }), 'leaseName');
    rejectsOption(() => new LeaseEventsObserver({ ...base, namespace: 'a.b' }), 'namespace');
    rejectsOption(
      () => new LeaseEventsObserver({ ...base, requestTimeoutMs: 0 }),
      'requestTimeoutMs',
    );
  });
});

describe('PodRoleLabelObserver options', () => {
  const saved = { POD_NAME: process.env.POD_NAME, POD_NAMESPACE: process.env.POD_NAMESPACE };
  beforeEach(() => {
    delete process.env.POD_NAME;
    delete process.env.POD_NAMESPACE;
  });
  afterEach(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it('takes the pod from POD_NAME and POD_NAMESPACE (downward API) and the default key', () => {
    process.env.POD_NAME = 'worker-7f9c';
    process.env.POD_NAMESPACE = 'shop';
    const observer = new PodRoleLabelObserver({ kubeConfig });
    assert.equal(observer.podName, 'worker-7f9c');
    assert.equal(observer.namespace, 'shop');
    assert.equal(observer.labelKey, DEFAULT_ROLE_LABEL_KEY);
  });

  it('without POD_NAME or POD_NAMESPACE: an error naming the option and the downward API', () => {
    process.env.POD_NAMESPACE = 'shop';
    rejectsOption(() => new PodRoleLabelObserver({ kubeConfig }), 'podName');
    assert.throws(() => new PodRoleLabelObserver({ kubeConfig }), /downward API/);
    process.env.POD_NAME = 'worker-7f9c';
    delete process.env.POD_NAMESPACE;
    rejectsOption(() => new PodRoleLabelObserver({ kubeConfig }), 'namespace');
  });

  it('refuses a label key that is not a qualified name', () => {
    const pod = { kubeConfig, podName: 'w', namespace: 'shop' };
    new PodRoleLabelObserver({ ...pod, labelKey: 'role' });
    new PodRoleLabelObserver({ ...pod, labelKey: 'example.com/role' });
    for (const bad of ['', 'role=leader', 'UPPER.com/role', 'a/b/c', '-role']) {
      rejectsOption(() => new PodRoleLabelObserver({ ...pod, labelKey: bad }), 'labelKey');
    }
  });
});
