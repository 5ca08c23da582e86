/**
 * ShardsMoved Events (ShardEventsObserver) against the real kube-apiserver: members of a real
 * sharded election, each with its own credentials and RBAC; the coordinator records the grants
 * on the assignment Lease, at most one Event per 10 s, later grants coalesced into the next one,
 * each note within the API server's 1 KB.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { CoreV1Api, type EventsV1Event, EventsV1Api } from '@kubernetes/client-node';
import { assignmentLeaseName, KubernetesShardLeaseStore, ShardedElection } from 'nest-leader/core';
import {
  combineShardObservers,
  DEFAULT_SHARDS_MOVED_INTERVAL_MS,
  MAX_EVENT_NOTE_BYTES,
  SHARDS_MOVED_EVENT_REASON,
  ShardEventsObserver,
} from 'nest-leader/observability';
import { RecordingLogger } from 'nest-leader/testing';
import {
  coordinationApi,
  getTestCluster,
  kubeConfigFor,
  uniqueLeaseName,
} from '../support/cluster.js';
import { EVENTS_CREATE_RULE, grantLeaseAccess, grantRules } from '../support/rbac.js';
import { eventually } from '../support/eventually.js';

const cluster = getTestCluster();
const namespace = cluster.namespace;
const admin = kubeConfigFor(cluster);
const SHARDED_VERBS = ['get', 'create', 'update', 'list', 'watch'];
const timings = { leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 1 };
const MEMBERS = ['alice', 'bob', 'carol'];

/** The Events regarding Lease `leaseName`, oldest first, as events.k8s.io/v1 serves them. */
async function eventsOn(leaseName: string): Promise<EventsV1Event[]> {
  const list = await admin.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace });
  return list.items
    .filter((e) => e.regarding?.kind === 'Lease' && e.regarding.name === leaseName)
    .sort((a, b) => new Date(a.eventTime).getTime() - new Date(b.eventTime).getTime());
}

describe('ShardsMoved Events on the assignment Lease', { timeout: 120_000 }, () => {
  before(async () => {
    for (const identity of MEMBERS) {
      await grantLeaseAccess(cluster, identity, SHARDED_VERBS);
      await grantRules(cluster, identity, 'events', [EVENTS_CREATE_RULE]);
    }
  });

  test('the coordinator records the grants on <name>-shards: the first at once, the rest coalesced, ≥ 10 s apart, notes ≤ 1 KB', async () => {
    const name = uniqueLeaseName('shard-events');
    const logger = new RecordingLogger();
    const observers = new Map<string, ShardEventsObserver>();
    const member = (identity: string) => {
      const kubeConfig = kubeConfigFor(cluster, identity);
      const observer = new ShardEventsObserver({
        kubeConfig,
        namespace,
        election: name,
        identity,
        logger,
      });
      observers.set(identity, observer);
      return new ShardedElection({
        name,
        shards: 12,
        identity,
        store: new KubernetesShardLeaseStore({ kubeConfig, namespace, identity }),
        ...timings,
        logger,
        observer: combineShardObservers(observer),
      });
    };
    const [a, b, c] = MEMBERS.map(member) as [ShardedElection, ShardedElection, ShardedElection];
    try {
      a.start();
      await eventually(() => assert.equal(a.ownedShards().length, 12, 'a owns every shard'), {
        timeoutMs: 20_000,
        intervalMs: 100,
      });
      const assignment = assignmentLeaseName(name);
      const [first] = await eventually(
        async () => {
          const events = await eventsOn(assignment);
          assert.equal(events.length, 1, 'the first grants: one Event at once');
          return events;
        },
        { timeoutMs: 10_000, intervalMs: 200 },
      );
      assert.match(
        first!.note!,
        /^12 shards granted at revision \d+: alice ← 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11$/,
      );
      b.start();
      c.start();
      await eventually(
        () => {
          for (const m of [a, b, c])
            assert.equal(m.ownedShards().length, 4, `${m.identity} owns 4`);
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      // Every later grant is in an Event once its interval has passed.
      const events = await eventually(
        async () => {
          const all = await eventsOn(assignment);
          const later = all
            .slice(1)
            .map((e) => e.note!)
            .join(' | ');
          assert.match(later, /bob ← .*\(from alice/, later);
          assert.match(later, /carol ← .*\(from alice/, later);
          return all;
        },
        { timeoutMs: 2 * DEFAULT_SHARDS_MOVED_INTERVAL_MS + 5_000, intervalMs: 250 },
      );
      // Two joins inside the interval after the first Event: their grants waited for it.
      for (let i = 1; i < events.length; i++) {
        const apartMs =
          new Date(events[i]!.eventTime).getTime() - new Date(events[i - 1]!.eventTime).getTime();
        assert.ok(
          apartMs >= DEFAULT_SHARDS_MOVED_INTERVAL_MS - 50,
          `Events ${i - 1} and ${i} ${apartMs} ms apart, at least the interval`,
        );
      }
      assert.ok(events.length <= 3, `the joins coalesced: ${events.length} Events`);
      const uid = (
        await coordinationApi(cluster).readNamespacedLease({ name: assignment, namespace })
      ).metadata!.uid!;
      for (const event of events) {
        assert.equal(event.reason, SHARDS_MOVED_EVENT_REASON);
        assert.equal(event.type, 'Normal');
        assert.equal(event.reportingController, 'nest-leader');
        assert.equal(event.reportingInstance, 'alice', 'the coordinator reports');
        assert.deepEqual(
          {
            apiVersion: event.regarding?.apiVersion,
            kind: event.regarding?.kind,
            name: event.regarding?.name,
            namespace: event.regarding?.namespace,
            uid: event.regarding?.uid,
          },
          { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: assignment, namespace, uid },
        );
        assert.ok(Buffer.byteLength(event.note!) <= MAX_EVENT_NOTE_BYTES);
      }
      // kubectl describe lease <name>-shards: core/v1 Events by involvedObject.
      const described = await admin.makeApiClient(CoreV1Api).listNamespacedEvent({
        namespace,
        fieldSelector: `involvedObject.kind=Lease,involvedObject.name=${assignment},involvedObject.uid=${uid}`,
      });
      assert.deepEqual(
        described.items.map((e) => e.message).sort(),
        events.map((e) => e.note).sort(),
      );
      assert.deepEqual(
        logger.messages('warn').filter((m) => m.includes('Event')),
        [],
      );
    } finally {
      await Promise.all([a.stop(), b.stop(), c.stop()]);
      await Promise.all([...observers.values()].map((o) => o.flush()));
    }
  });

  test('a note of 4,096 shards over many owners is cut to 1 KB, and the API server takes it', async () => {
    const name = uniqueLeaseName('shard-events-long');
    const assignment = assignmentLeaseName(name);
    await coordinationApi(cluster).createNamespacedLease({
      namespace,
      body: { metadata: { name: assignment, namespace }, spec: {} },
    });
    const observer = new ShardEventsObserver({
      kubeConfig: kubeConfigFor(cluster, MEMBERS[0]),
      namespace,
      election: name,
      identity: MEMBERS[0]!,
    });
    for (let shard = 0; shard < 4096; shard++) {
      observer.shardGranted({
        shard,
        owner: `member-with-a-long-name-${shard % 64}`,
        from: `previous-owner-${shard % 7}`,
        token: 100 + shard,
      });
    }
    await observer.flush();
    const events = await eventsOn(assignment);
    assert.equal(events.length, 1, 'one Event for all of them');
    const note = events[0]!.note!;
    assert.ok(note.startsWith('4096 shards granted at revisions 100-4195: '), note.slice(0, 80));
    assert.ok(note.endsWith('…'));
    assert.ok(Buffer.byteLength(note) <= MAX_EVENT_NOTE_BYTES, `${Buffer.byteLength(note)} bytes`);
    assert.ok(Buffer.byteLength(note) > MAX_EVENT_NOTE_BYTES - 64, 'cut near the limit, not short');
  });
});
