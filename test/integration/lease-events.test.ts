/**
 * Kubernetes Events on the Lease (LeaseEventsObserver) against the real kube-apiserver: what
 * `kubectl get events` and `kubectl describe lease` show after real elections, with each
 * candidate's own credentials and RBAC.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { CoreV1Api, type EventsV1Event, EventsV1Api } from '@kubernetes/client-node';
import {
  combineElectionObservers,
  ELECTION_METRIC_NAMES,
  LeaseEventsObserver,
  PrometheusElectionObserver,
} from 'nest-leader/observability';
import { Registry } from 'prom-client';
import { RecordingLogger } from 'nest-leader/testing';
import {
  coordinationApi,
  getTestCluster,
  kubeConfigFor,
  uniqueLeaseName,
} from '../support/cluster.js';
import {
  ELECTOR_VERBS,
  EVENTS_CREATE_RULE,
  grantLeaseAccess,
  grantRules,
} from '../support/rbac.js';
import { eventually } from '../support/eventually.js';
import { observedElector } from '../support/observed-candidate.js';

const cluster = getTestCluster();
const namespace = cluster.namespace;
const admin = kubeConfigFor(cluster);

function eventsObserver(identity: string, leaseName: string, logger = new RecordingLogger()) {
  return new LeaseEventsObserver({
    kubeConfig: kubeConfigFor(cluster, identity),
    namespace,
    leaseName,
    logger,
  });
}

/** The Events regarding Lease `leaseName`, oldest first, as events.k8s.io/v1 serves them. */
async function eventsOn(leaseName: string): Promise<EventsV1Event[]> {
  const list = await admin.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace });
  return list.items
    .filter((e) => e.regarding?.kind === 'Lease' && e.regarding.name === leaseName)
    .sort((a, b) => new Date(a.eventTime).getTime() - new Date(b.eventTime).getTime());
}

async function leaseUid(leaseName: string): Promise<string> {
  const lease = await coordinationApi(cluster).readNamespacedLease({ name: leaseName, namespace });
  return lease.metadata!.uid!;
}

describe('Kubernetes Events on the Lease', { timeout: 120_000 }, () => {
  before(async () => {
    for (const identity of ['alice', 'bob', 'carol']) {
      await grantLeaseAccess(cluster, identity);
      await grantRules(cluster, identity, 'events', [EVENTS_CREATE_RULE]);
    }
    await grantLeaseAccess(cluster, 'dave'); // no Events
  });

  test('"<identity> became leader" and "… stopped leading" on the Lease, as kubectl describe finds them', async () => {
    const leaseName = uniqueLeaseName('events');
    const logger = new RecordingLogger();
    const observers = {
      alice: eventsObserver('alice', leaseName, logger),
      bob: eventsObserver('bob', leaseName, logger),
    };
    const alice = observedElector(cluster, leaseName, 'alice', observers.alice);
    const bob = observedElector(cluster, leaseName, 'bob', observers.bob);
    alice.start();
    await eventually(() => assert.ok(alice.isLeader(), 'alice leads'), {
      timeoutMs: 15_000,
      intervalMs: 20,
    });
    bob.start();
    await alice.stop(); // releases: bob takes over
    await eventually(() => assert.ok(bob.isLeader(), 'bob takes over'), {
      timeoutMs: 15_000,
      intervalMs: 20,
    });
    await bob.stop();
    await Promise.all([observers.alice.flush(), observers.bob.flush()]);

    const uid = await leaseUid(leaseName);
    const events = await eventsOn(leaseName);
    assert.deepEqual(
      events.map((e) => `${e.reportingInstance}: ${e.type} ${e.action} "${e.note}"`),
      [
        'alice: Normal BecameLeader "alice became leader: created (it created the Lease)"',
        'alice: Normal StoppedLeading "alice stopped leading: stopped (the elector was stopped)"',
        'bob: Normal BecameLeader "bob became leader: release (the previous leader released the Lease)"',
        'bob: Normal StoppedLeading "bob stopped leading: stopped (the elector was stopped)"',
      ],
      JSON.stringify(logger.lines),
    );
    for (const event of events) {
      assert.equal(event.reason, 'LeaderElection');
      assert.equal(event.reportingController, 'nest-leader');
      assert.deepEqual(
        {
          apiVersion: event.regarding?.apiVersion,
          kind: event.regarding?.kind,
          name: event.regarding?.name,
          namespace: event.regarding?.namespace,
          uid: event.regarding?.uid,
        },
        { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: leaseName, namespace, uid },
      );
      assert.ok(event.metadata?.name?.startsWith(`${leaseName}.`), event.metadata?.name);
    }
    // kubectl describe lease: core/v1 Events selected by the object's kind, name and uid.
    const described = await admin.makeApiClient(CoreV1Api).listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.kind=Lease,involvedObject.name=${leaseName},involvedObject.uid=${uid}`,
    });
    assert.deepEqual(
      described.items.map((e) => e.message).sort(),
      events.map((e) => e.note).sort(),
    );
  });

  test("a targeted handoff: the target's BecameLeader Event and its terms_started_total say handoff", async () => {
    const leaseName = uniqueLeaseName('events-handoff');
    const observers = {
      alice: eventsObserver('alice', leaseName),
      bob: eventsObserver('bob', leaseName),
    };
    const registry = new Registry();
    const metrics = new PrometheusElectionObserver({ registry });
    const alice = observedElector(cluster, leaseName, 'alice', observers.alice);
    const bob = observedElector(
      cluster,
      leaseName,
      'bob',
      combineElectionObservers(observers.bob, metrics),
    );
    alice.start();
    await eventually(() => assert.ok(alice.isLeader(), 'alice leads'), {
      timeoutMs: 15_000,
      intervalMs: 20,
    });
    bob.start();
    await eventually(() => assert.equal(bob.leader, 'alice', 'bob follows alice'), {
      timeoutMs: 15_000,
      intervalMs: 20,
    });
    await alice.transferLeadership('bob');
    await eventually(() => assert.ok(bob.isLeader(), 'bob takes the handoff'), {
      timeoutMs: 15_000,
      intervalMs: 20,
    });
    await Promise.all([alice.stop(), bob.stop()]);
    await Promise.all([observers.alice.flush(), observers.bob.flush()]);
    metrics.close();

    const events = await eventsOn(leaseName);
    assert.deepEqual(
      events.map((e) => `${e.reportingInstance}: ${e.type} ${e.action} "${e.note}"`).slice(0, 3),
      [
        'alice: Normal BecameLeader "alice became leader: created (it created the Lease)"',
        'alice: Normal StoppedLeading "alice stopped leading: handed-off (leadership was handed to another candidate)"',
        'bob: Normal BecameLeader "bob became leader: handoff (the previous leader handed the Lease to it)"',
      ],
    );
    const started = (await registry.getSingleMetric(ELECTION_METRIC_NAMES.termsStarted)!.get())
      .values;
    assert.deepEqual(
      started.filter((v) => v.value > 0).map((v) => ({ ...v.labels, value: v.value })),
      [{ name: leaseName, reason: 'handoff', value: 1 }],
    );
  });

  test('a lost Lease is recorded as a Warning with the reason (renew-deadline-exceeded)', async () => {
    const leaseName = uniqueLeaseName('events-lost');
    const observer = eventsObserver('carol', leaseName);
    const carol = observedElector(cluster, leaseName, 'carol', observer, { releaseOnStop: false });
    carol.start();
    try {
      await eventually(() => assert.ok(carol.isLeader(), 'carol leads'), {
        timeoutMs: 15_000,
        intervalMs: 20,
      });
      // RBAC now refuses carol's renewals: she steps down at renewDeadline.
      await grantLeaseAccess(cluster, 'carol', ['get']);
      await eventually(() => assert.ok(!carol.isLeader(), 'carol steps down'), {
        timeoutMs: 15_000,
        intervalMs: 20,
      });
    } finally {
      await carol.stop();
      await grantLeaseAccess(cluster, 'carol', ELECTOR_VERBS);
    }
    await observer.flush();
    const events = await eventsOn(leaseName);
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.note}`),
      [
        'Normal carol became leader: created (it created the Lease)',
        'Warning carol stopped leading: renew-deadline-exceeded (the Lease was not renewed within renewDeadline)',
      ],
    );
  });

  test('without RBAC for Events: one clear warning, and the election goes on', async () => {
    const leaseName = uniqueLeaseName('events-forbidden');
    const observerLogger = new RecordingLogger();
    const observer = eventsObserver('dave', leaseName, observerLogger);
    for (let term = 1; term <= 2; term++) {
      const dave = observedElector(cluster, leaseName, 'dave', observer);
      dave.start();
      await eventually(() => assert.ok(dave.isLeader(), `dave leads (term ${term})`), {
        timeoutMs: 15_000,
        intervalMs: 20,
      });
      await dave.stop();
    }
    await observer.flush();
    const lease = await coordinationApi(cluster).readNamespacedLease({
      name: leaseName,
      namespace,
    });
    assert.equal(lease.spec?.leaseTransitions, 1, 'dave acquired twice (0, then 1) and released');
    assert.equal(lease.spec?.holderIdentity, '');
    const warnings = observerLogger.messages('warn');
    assert.equal(warnings.length, 1, JSON.stringify(observerLogger.lines));
    assert.match(
      warnings[0]!,
      /Could not record a Kubernetes Event on Lease .*: Cannot create events\.events\.k8s\.io .*forbidden \(HTTP 403\)/,
    );
    assert.match(
      warnings[0]!,
      /grant the pod's ServiceAccount the verb create on events\.events\.k8s\.io/,
    );
    assert.match(warnings[0]!, /Leader election is unaffected/);
    assert.equal(observerLogger.messages('debug').length, 3, 'the other 3 Events');
    assert.deepEqual(await eventsOn(leaseName), []);
  });
});
