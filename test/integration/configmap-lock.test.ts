/**
 * ConfigMapLock against the real kube-apiserver: client-go's historical record in the
 * `control-plane.alpha.kubernetes.io/leader` annotation, with RBAC on configmaps only, the
 * ConfigMap's other contents preserved, and records of other implementations read without
 * crashing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { KubernetesApiError } from 'nest-leader';
import {
  ConfigMapLock,
  LEADER_ANNOTATION,
  LeaderElector,
  UNREADABLE_HOLDER,
} from 'nest-leader/core';
import { getTestCluster, kubeConfigFor, uniqueLeaseName } from '../support/cluster.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import { grantConfigMapAccess, revokeConfigMapAccess } from '../support/rbac.js';
import { eventually } from '../support/eventually.js';

const cluster = getTestCluster();
const namespace = cluster.namespace;
const core = kubeConfigFor(cluster).makeApiClient(CoreV1Api);
const { leaseDurationSeconds } = FAST_TIMINGS;
const leaseDurationMs = leaseDurationSeconds * 1000;
const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function elector(identity: string, name: string, warnings: string[] = []): LeaderElector {
  return new LeaderElector({
    lock: new ConfigMapLock({
      kubeConfig: kubeConfigFor(cluster, identity),
      name,
      namespace,
      identity,
      onUnreadableRecord: (message) => warnings.push(message),
    }),
    identity,
    ...FAST_TIMINGS,
    logger: silent,
  });
}

async function annotation(name: string): Promise<Record<string, unknown>> {
  const cm = await core.readNamespacedConfigMap({ name, namespace });
  return JSON.parse(cm.metadata!.annotations![LEADER_ANNOTATION]!) as Record<string, unknown>;
}

async function writeAnnotation(name: string, value: string, extra: Partial<V1ConfigMap> = {}) {
  await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name, namespace, annotations: { [LEADER_ANNOTATION]: value } }, ...extra },
  });
}

const waitLeader = (e: LeaderElector, timeoutMs: number) =>
  eventually(() => assert.ok(e.isLeader(), `${e.identity} leads`), { timeoutMs, intervalMs: 20 });

describe('ConfigMapLock on the real kube-apiserver', () => {
  const running: LeaderElector[] = [];
  const start = (e: LeaderElector) => {
    running.push(e);
    e.start();
    return e;
  };
  before(async () => {
    await grantConfigMapAccess(cluster, 'alice');
    await grantConfigMapAccess(cluster, 'bob');
  });
  after(async () => {
    await Promise.all(running.map((e) => e.stop()));
    await revokeConfigMapAccess(cluster, 'alice');
    await revokeConfigMapAccess(cluster, 'bob');
  });

  test("two candidates: one leads, the annotation holds client-go's record; release hands over", async () => {
    const name = uniqueLeaseName('cm');
    const a = start(elector('alice', name));
    const b = start(elector('bob', name));
    await eventually(() => assert.ok(a.isLeader() || b.isLeader()), { timeoutMs: leaseDurationMs });
    const [leader, follower] = a.isLeader() ? [a, b] : [b, a];
    assert.equal(follower.isLeader(), false);
    const record = await annotation(name);
    assert.deepEqual(Object.keys(record).sort(), [
      'acquireTime',
      'holderIdentity',
      'leaderTransitions',
      'leaseDurationSeconds',
      'renewTime',
    ]);
    assert.equal(record.holderIdentity, leader.identity);
    assert.equal(record.leaseDurationSeconds, leaseDurationSeconds);
    assert.match(String(record.renewTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const before = record.leaderTransitions as number;
    const releasedAt = performance.now();
    await leader.stop();
    await waitLeader(follower, 3000);
    assert.ok(performance.now() - releasedAt < leaseDurationMs, 'released, not expired');
    const after = await annotation(name);
    assert.equal(after.holderIdentity, follower.identity);
    assert.equal(after.leaderTransitions, before + 1);
  });

  test("an application's ConfigMap: data, labels and other annotations survive acquire, renew and release", async () => {
    const name = uniqueLeaseName('cm-app');
    await core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: { name, namespace, labels: { app: 'billing' }, annotations: { owner: 'team-a' } },
        data: { 'config.yaml': 'retries: 3\n' },
      },
    });
    const e = start(elector('alice', name));
    await waitLeader(e, leaseDurationMs);
    await new Promise((r) => setTimeout(r, 2500)); // a few renewals
    await e.stop();
    const cm = await core.readNamespacedConfigMap({ name, namespace });
    assert.deepEqual(cm.data, { 'config.yaml': 'retries: 3\n' });
    assert.equal(cm.metadata!.labels!.app, 'billing');
    assert.equal(cm.metadata!.annotations!.owner, 'team-a');
    const record = JSON.parse(cm.metadata!.annotations![LEADER_ANNOTATION]!) as {
      holderIdentity: string;
    };
    assert.equal(record.holderIdentity, '', 'released');
  });

  test("a Python client's record (string duration, naive times, no transitions) is waited out, then taken", async () => {
    const name = uniqueLeaseName('cm-py');
    await writeAnnotation(
      name,
      '{"holderIdentity": "py-ghost", "leaseDurationSeconds": "3", "acquireTime": "2026-11-22 11:30:00.123456", "renewTime": "2026-11-22 11:30:01.654321"}',
    );
    const startedAt = performance.now();
    const e = start(elector('alice', name));
    await eventually(() => assert.equal(e.leader, 'py-ghost'), { timeoutMs: 3000 });
    await waitLeader(e, 3000 + 3000);
    const waitedMs = performance.now() - startedAt;
    assert.ok(
      waitedMs >= 3000,
      `waited the record's 3 s from its observation (${Math.round(waitedMs)} ms)`,
    );
    const record = await annotation(name);
    assert.equal(record.holderIdentity, 'alice');
    assert.equal(record.leaderTransitions, 1, 'absent transitions read as 0');
  });

  test("fabric8's leaseDuration is honoured", async () => {
    const name = uniqueLeaseName('cm-java');
    await writeAnnotation(
      name,
      '{"holderIdentity":"java-ghost","leaseDuration":5.000000000,"acquireTime":"2026-01-30T10:00:00.000000Z","renewTime":"2026-01-30T10:00:00.000000Z","leaderTransitions":41}',
    );
    const startedAt = performance.now();
    const e = start(elector('alice', name));
    await waitLeader(e, 5000 + 3000);
    assert.ok(performance.now() - startedAt >= 5000, 'waited the record’s 5 s, not ours (4 s)');
    assert.equal((await annotation(name)).leaderTransitions, 42);
  });

  test('an unreadable annotation: one warning, treated as held until it stays unchanged for leaseDuration', async () => {
    const name = uniqueLeaseName('cm-bad');
    await writeAnnotation(name, '{this is not json');
    const warnings: string[] = [];
    const startedAt = performance.now();
    const e = start(elector('alice', name, warnings));
    await eventually(() => assert.equal(e.leader, UNREADABLE_HOLDER), { timeoutMs: 3000 });
    await waitLeader(e, leaseDurationMs + 3000);
    assert.ok(performance.now() - startedAt >= leaseDurationMs, 'not taken as free');
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0]!, /ConfigMap .*cm-bad.* is not JSON/);
    assert.equal((await annotation(name)).holderIdentity, 'alice', 'a clean record written');
  });

  test('without RBAC on configmaps: KubernetesApiError forbidden, naming configmaps and the verbs', async () => {
    const lock = new ConfigMapLock({
      kubeConfig: kubeConfigFor(cluster, 'carol'),
      name: uniqueLeaseName('cm-rbac'),
      namespace,
      identity: 'carol',
    });
    await assert.rejects(lock.get(), (error: unknown) => {
      assert.ok(error instanceof KubernetesApiError);
      assert.equal(error.kind, 'forbidden');
      assert.equal(error.resource, 'configmaps');
      assert.match(error.message, /get, create and update on configmaps/);
      return true;
    });
  });
});
