/**
 * Pod role labels (PodRoleLabelObserver) against the real kube-apiserver: real Pod objects
 * (no kubelet is needed to label a Pod), each candidate patching with its own credentials.
 * After every handover exactly one Pod carries `leader`, and a Service selecting on the label
 * (as the endpoints controller would: its selector as a label selector) finds only the leader.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, V1MicroTime, type V1Service } from '@kubernetes/client-node';
import type { ElectionObserver } from 'nest-leader';
import {
  PodRoleLabelObserver,
  DEFAULT_ROLE_LABEL_KEY as ROLE,
  LEADER_POD_DELETION_COST,
  POD_DELETION_COST_ANNOTATION,
  POD_ROLE,
} from 'nest-leader/observability';
import { RecordingLogger } from 'nest-leader/testing';
import {
  coordinationApi,
  getTestCluster,
  kubeConfigFor,
  uniqueLeaseName,
} from '../support/cluster.js';
import { grantLeaseAccess, grantRules, revokeRules } from '../support/rbac.js';
import { eventually, found } from '../support/eventually.js';
import { observedElector } from '../support/observed-candidate.js';
import { createPodObject } from '../support/pod-objects.js';

const cluster = getTestCluster();
const namespace = cluster.namespace;
const core = kubeConfigFor(cluster).makeApiClient(CoreV1Api);
const PATCH_PODS = { apiGroups: [''], resources: ['pods'], verbs: ['patch'] };
const app = `role-labels-${randomBytes(3).toString('hex')}`;

/** A Pod per identity, named after it (identity = POD_NAME, as with the downward API). */
function podName(identity: string): string {
  return `${app}-${identity}`;
}

async function createPod(identity: string): Promise<void> {
  await createPodObject(core, namespace, podName(identity), { app });
}

/** Role label of each of this test's Pods, as `kubectl get pods -L nest-leader/role` shows it. */
async function roles(): Promise<Record<string, string | undefined>> {
  const pods = await core.listNamespacedPod({ namespace, labelSelector: `app=${app}` });
  return Object.fromEntries(pods.items.map((p) => [p.metadata!.name!, p.metadata!.labels?.[ROLE]]));
}

/** Each of this test's Pods' pod-deletion-cost annotation (the leader's: scaled down last). */
async function deletionCosts(): Promise<Record<string, string | undefined>> {
  const pods = await core.listNamespacedPod({ namespace, labelSelector: `app=${app}` });
  return Object.fromEntries(
    pods.items.map((p) => [
      p.metadata!.name!,
      p.metadata!.annotations?.[POD_DELETION_COST_ANNOTATION],
    ]),
  );
}

/** The Pods a Service's selector matches, as the endpoints controller selects them. */
async function selected(service: V1Service): Promise<string[]> {
  const selector = Object.entries(service.spec!.selector!)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const pods = await core.listNamespacedPod({ namespace, labelSelector: selector });
  return pods.items.map((p) => p.metadata!.name!).sort();
}

/** An observer that stops forwarding when the process "crashes". */
function crashable(observer: ElectionObserver): ElectionObserver & { crash(): void } {
  let alive = true;
  const forward =
    <K extends keyof ElectionObserver>(key: K) =>
    (event: never) => {
      if (alive) (observer[key] as (e: never) => void | undefined)?.call(observer, event);
    };
  return {
    termStarted: forward('termStarted'),
    termEnded: forward('termEnded'),
    leaderObserved: forward('leaderObserved'),
    lockRequest: forward('lockRequest'),
    crash: () => {
      alive = false;
    },
  };
}

/**
 * dave (Lease access, no RBAC on pods unless a test grants it) leading a Lease of its own with
 * a role-label observer on its Pod; stop `dave` when done.
 */
async function daveLeads(leasePrefix: string) {
  const logger = new RecordingLogger();
  const labels = new PodRoleLabelObserver({
    kubeConfig: kubeConfigFor(cluster, 'dave'),
    podName: podName('dave'),
    namespace,
    logger,
  });
  const dave = observedElector(cluster, uniqueLeaseName(leasePrefix), 'dave', labels, {
    identity: podName('dave'),
  });
  dave.start();
  try {
    await eventually(() => assert.ok(dave.isLeader(), 'dave leads'), {
      timeoutMs: 15_000,
      intervalMs: 20,
    });
  } catch (error) {
    await dave.stop();
    throw error;
  }
  return { dave, labels, logger };
}

describe('pod role labels', { timeout: 120_000 }, () => {
  const identities = ['alice', 'bob', 'carol'] as const;
  let service: V1Service;

  before(async () => {
    for (const identity of [...identities, 'dave']) await createPod(identity);
    for (const identity of identities) {
      await grantLeaseAccess(cluster, identity);
      await grantRules(cluster, identity, 'pods', [PATCH_PODS]);
    }
    await grantLeaseAccess(cluster, 'dave'); // may not patch pods
    service = await core.createNamespacedService({
      namespace,
      body: {
        metadata: { name: app },
        spec: { selector: { app, [ROLE]: 'leader' }, ports: [{ port: 80, targetPort: 3000 }] },
      },
    });
  });

  after(async () => {
    await core.deleteCollectionNamespacedPod({ namespace, labelSelector: `app=${app}` });
    await core.deleteNamespacedService({ name: app, namespace });
  });

  test('after every handover (release, crash) exactly one Pod is leader, and the Service selects only it', async () => {
    const leaseName = uniqueLeaseName('role-labels');
    const candidates = identities.map((identity) => {
      const labels = new PodRoleLabelObserver({
        kubeConfig: kubeConfigFor(cluster, identity),
        podName: podName(identity),
        namespace,
      });
      const observer = crashable(labels);
      const elector = observedElector(cluster, leaseName, identity, observer, {
        identity: podName(identity),
        onStoppedLeading: () => labels.flush(),
      });
      return { identity, pod: podName(identity), labels, observer, elector };
    });
    const flushAll = () => Promise.all(candidates.map((c) => c.labels.flush()));
    const leaderOf = (among: typeof candidates) => among.find((c) => c.elector.isLeader());

    // Two `leader` labels at any sampled instant would be a routing split.
    const doubleLeader: string[] = [];
    let sampling = true;
    let samples = 0;
    const sampler = (async () => {
      while (sampling) {
        const current = await roles();
        samples++;
        const leaders = Object.keys(current).filter((pod) => current[pod] === 'leader');
        if (leaders.length > 1) doubleLeader.push(leaders.join(', '));
        await new Promise((r) => setTimeout(r, 25));
      }
    })();

    async function expectOnlyLeader(leader: (typeof candidates)[number], when: string) {
      // Every live candidate has seen the new leader (followers read every retryPeriod).
      await eventually(
        () =>
          assert.ok(
            live.every((c) => c.elector.leader === leader.pod),
            `${when}: everyone sees ${leader.pod}`,
          ),
        { timeoutMs: 15_000, intervalMs: 20 },
      );
      await flushAll();
      const expected: Record<string, string | undefined> = Object.fromEntries(
        candidates.map((c) => [c.pod, c === leader ? 'leader' : 'standby']),
      );
      expected[podName('dave')] = undefined;
      assert.deepEqual(await roles(), expected, when);
      assert.deepEqual(
        await deletionCosts(),
        Object.fromEntries(
          Object.keys(expected).map((pod) => [
            pod,
            pod === leader.pod ? LEADER_POD_DELETION_COST : undefined,
          ]),
        ),
        `${when}: only the leader's Pod has a deletion cost (scaled down last)`,
      );
      assert.deepEqual(
        await selected(service),
        [leader.pod],
        `${when}: Service selects the leader`,
      );
    }

    let live = candidates;
    try {
      for (const c of candidates) c.elector.start();
      const first = await eventually(() => found(leaderOf(live), 'a leader'), {
        timeoutMs: 15_000,
        intervalMs: 20,
      });
      await expectOnlyLeader(first, 'elected');

      // Handover 1: the leader shuts down and releases (after its label is flipped).
      await first.elector.stop();
      live = live.filter((c) => c !== first);
      const second = await eventually(() => found(leaderOf(live), 'a leader after release'), {
        timeoutMs: 15_000,
        intervalMs: 20,
      });
      await expectOnlyLeader(second, 'after release');

      // Handover 2: the leader's process is lost — no more label writes, and RBAC now refuses
      // its renewals and release: its Pod still says leader while the Lease expires.
      second.observer.crash();
      await grantLeaseAccess(cluster, second.identity, ['get']);
      live = live.filter((c) => c !== second);
      const third = await eventually(() => found(leaderOf(live), 'a leader after the crash'), {
        timeoutMs: 15_000,
        intervalMs: 20,
      });
      await expectOnlyLeader(third, 'after crash');
    } finally {
      sampling = false;
      await sampler;
      for (const c of candidates) await c.elector.stop();
      for (const identity of identities) await grantLeaseAccess(cluster, identity);
    }
    // The new leader demotes the previous holder's Pod before it labels its own: never two.
    assert.deepEqual(doubleLeader, [], 'no instant with two leader labels');
    assert.ok(samples > 20, `sampled the labels ${samples} times`);
  });

  for (const holder of ['..', 'mallory\n[Nest] 1 - LOG forged line', '../../namespaces/x']) {
    test(`a previous holder named ${JSON.stringify(holder)} (not a Pod name) is never patched: one quoted warning`, async () => {
      // A foreign writer (admin: any candidate may write the Lease) names the hostile holder.
      const leaseName = uniqueLeaseName('role-labels-hostile');
      const renewTime = new V1MicroTime(Date.now());
      await coordinationApi(cluster).createNamespacedLease({
        namespace,
        body: {
          metadata: { name: leaseName, namespace },
          spec: {
            holderIdentity: holder,
            leaseDurationSeconds: 1,
            acquireTime: renewTime,
            renewTime,
            leaseTransitions: 3,
          },
        },
      });
      const observerLog = new RecordingLogger();
      const electorLog = new RecordingLogger();
      const labels = new PodRoleLabelObserver({
        kubeConfig: kubeConfigFor(cluster, 'carol'),
        podName: podName('carol'),
        namespace,
        logger: observerLog,
      });
      const carol = observedElector(cluster, leaseName, 'carol', labels, {
        identity: podName('carol'),
        logger: electorLog,
        onStoppedLeading: () => labels.flush(),
      });
      carol.start();
      try {
        // It observed the hostile holder, waited out its 1 s, and took the Lease.
        await eventually(() => assert.ok(carol.isLeader(), 'carol leads'), {
          timeoutMs: 15_000,
          intervalMs: 20,
        });
        await labels.flush();
        assert.equal((await roles())[podName('carol')], 'leader');
      } finally {
        await carol.stop();
      }
      const warnings = observerLog.messages('warn');
      assert.deepEqual(warnings, [
        `Not relabelling the previous holder ${JSON.stringify(holder)} as standby: it is not a ` +
          'Pod name (a DNS-1123 subdomain), so it cannot be a Pod of this namespace. Leader ' +
          'election is unaffected; further such holders are logged at debug level.',
      ]);
      const lines = [...observerLog.lines, ...electorLog.lines].map((l) => l.message);
      assert.ok(
        lines.every((line) => !line.includes('\n')),
        `no raw newline in any log line: ${JSON.stringify(lines)}`,
      );
      const ns = await core.readNamespace({ name: namespace });
      assert.equal(ns.metadata?.labels?.[ROLE], undefined, 'the namespace was not relabelled');
    });
  }

  test('without RBAC patch on pods: one warning naming the fix, and the election goes on', async () => {
    const { dave, labels, logger } = await daveLeads('role-labels-rbac');
    await dave.stop();
    await labels.flush();
    const warnings = logger.messages('warn');
    assert.equal(warnings.length, 1, JSON.stringify(logger.lines));
    assert.match(
      warnings[0]!,
      /Could not set the pod role label nest-leader\/role=standby: Cannot patch pods ".*-dave" .*forbidden \(HTTP 403\)/,
    );
    assert.match(warnings[0]!, /grant the pod's ServiceAccount the verb patch on pods/);
    assert.match(warnings[0]!, /retried with backoff until it lands/);
    assert.equal((await roles())[podName('dave')], undefined);
  });

  test('RBAC granted while it leads: its own label lands at a retry (a failed own write is retried, not dropped)', async () => {
    const { dave, logger } = await daveLeads('role-labels-retry');
    try {
      await eventually(() => assert.equal(logger.messages('warn').length, 1, 'refused once'), {
        timeoutMs: 10_000,
      });
      assert.equal((await roles())[podName('dave')], undefined, 'not labelled while refused');
      const grantedAt = performance.now();
      await grantRules(cluster, 'dave', 'pods', [PATCH_PODS]);
      await eventually(
        async () => assert.equal((await roles())[podName('dave')], POD_ROLE.leader),
        { timeoutMs: 40_000, intervalMs: 250 },
      );
      console.log(`# label landed ${Math.round(performance.now() - grantedAt)} ms after the grant`);
      assert.equal(logger.messages('warn').length, 1, 'the retries failed at debug level');
    } finally {
      await dave.stop();
      await revokeRules(cluster, 'dave', 'pods');
    }
  });
});
