/**
 * Handoff on stop to the preferred candidate, against the real kube-apiserver with real
 * processes: a rollout in miniature. Two candidates of the old pod template and one of the new
 * one advertise themselves (`--pod-template-hash`); the old leader is SIGTERMed and hands the
 * Lease to the new-template candidate — not to the other old one, which would be replaced next.
 * Every process authenticates with exactly the elector's RBAC (get, create, update, watch on
 * Leases): advertising needs no verb more.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CANDIDATES_ANNOTATION, parseAdvertisedCandidates } from 'nest-leader/core';
import { coordinationApi, getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import { candidateFleet } from '../support/candidate-fleet.js';
import { eventually } from '../support/eventually.js';
import { LeaseSampler } from '../support/leadership-timeline.js';

const cluster = getTestCluster();
const admin = coordinationApi(cluster);
const LEASE_MS = FAST_TIMINGS.leaseDurationSeconds * 1000;
const RETRY_MS = FAST_TIMINGS.retryPeriodSeconds * 1000;
/** Each candidate its own user, with exactly the elector's verbs. */
const USERS = ['alice', 'bob', 'carol'] as const;

async function readLease(name: string) {
  return admin.readNamespacedLease({ name, namespace: cluster.namespace });
}

describe('handoff on stop to the newest pod template (real processes, real kube-apiserver)', () => {
  const fleet = candidateFleet(cluster, USERS);
  const spawn = (
    leaseName: string,
    identity: string,
    user: (typeof USERS)[number],
    podTemplateHash: string,
  ) => fleet.start(leaseName, user, { identity, podTemplateHash });

  test('SIGTERM to the old leader hands the Lease to the new-template candidate: one new term, no wait', async () => {
    const leaseName = uniqueLeaseName('preferred');
    const oldLeader = await spawn(leaseName, 'web-aaa-1', 'alice', 'aaa');
    await oldLeader.waitFor((e) => e.event === 'started', LEASE_MS + 3 * RETRY_MS, 'started');
    const oldPeer = await spawn(leaseName, 'web-aaa-2', 'bob', 'aaa');
    const newPod = await spawn(leaseName, 'web-bbb-1', 'carol', 'bbb');

    // Every candidate's advertisement is on the Lease (written once each, at start).
    await eventually(
      async () => {
        const lease = await readLease(leaseName);
        const advertised = parseAdvertisedCandidates(
          lease.metadata?.annotations?.[CANDIDATES_ANNOTATION],
        );
        const identities = (advertised ?? []).map((c) => c.identity).sort();
        assert.deepEqual(identities, ['web-aaa-1', 'web-aaa-2', 'web-bbb-1']);
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    for (const follower of [oldPeer, newPod]) {
      await follower.waitFor(
        (e) => e.event === 'new-leader' && e.leader === oldLeader.identity,
        LEASE_MS + 3 * RETRY_MS,
        'new-leader web-aaa-1',
      );
    }
    const before = await readLease(leaseName);
    assert.equal(before.spec?.holderIdentity, 'web-aaa-1', 'still the first leader');
    const transitionsBefore = before.spec?.leaseTransitions ?? 0;
    const sampler = new LeaseSampler(admin, leaseName, cluster.namespace, 20);

    try {
      const killedMs = oldLeader.kill('SIGTERM');
      const started = await newPod.waitFor(
        (e) => e.event === 'started' && e.monotonicMs > killedMs,
        LEASE_MS + 3 * RETRY_MS,
        'started after the SIGTERM',
      );
      assert.equal(started.reason, 'preferred', 'its term starts as the preferred candidate');
      const exit = await oldLeader.exited;
      assert.equal(exit.code, 0, 'the old leader exits 0 on SIGTERM');
      const stopped = oldLeader.events.find((e) => e.event === 'stopped')!;
      // Let a wrong second takeover show up, if one were coming.
      await new Promise((r) => setTimeout(r, 2 * RETRY_MS));

      assert.equal(
        oldPeer.eventsWhere((e) => e.event === 'started').length,
        0,
        'the other old-template candidate never led',
      );
      assert.equal(newPod.eventsWhere((e) => e.event === 'started').length, 1, 'one new term');
      const afterLease = await readLease(leaseName);
      assert.equal(afterLease.spec?.holderIdentity, 'web-bbb-1');
      // +1 for the handoff record naming the target, whose term keeps it: one transition.
      assert.equal(afterLease.spec?.leaseTransitions, transitionsBefore + 1);
      assert.equal(started.leaseTransitions, transitionsBefore + 1);
      console.log(`# ${sampler.assertSampled(10)}`);
      const holders = [...new Set(sampler.samples.map((s) => s.holderIdentity))];
      assert.deepEqual(
        holders.filter((h) => h !== 'web-aaa-1' && h !== 'web-bbb-1'),
        [],
        `the Lease named only the old leader and the target (samples: ${holders.join(', ')})`,
      );
      assert.ok(
        sampler.samples.every((s) => s.holderIdentity !== ''),
        'never released to anyone',
      );
      const advertised = parseAdvertisedCandidates(
        afterLease.metadata?.annotations?.[CANDIDATES_ANNOTATION],
      );
      assert.deepEqual(
        (advertised ?? []).map((c) => c.identity).sort(),
        ['web-aaa-2', 'web-bbb-1'],
        'the old leader removed its advertisement in its last write',
      );

      const leaderlessMs = started.monotonicMs - stopped.monotonicMs;
      const sigtermToStartMs = started.monotonicMs - killedMs;
      console.log(
        `# handoff on stop: term end → new term ${Math.round(leaderlessMs)} ms, ` +
          `SIGTERM → new term ${Math.round(sigtermToStartMs)} ms`,
      );
      // The target watches the Lease: it takes the handoff at once, never after a leaseDuration.
      assert.ok(leaderlessMs < LEASE_MS, `leaderless for ${Math.round(leaderlessMs)} ms`);
    } finally {
      await sampler.stop();
    }
  });

  test("a follower's advertisement leaves a client-go leader's spec byte for byte (microseconds included): no false renewal", async () => {
    const leaseName = uniqueLeaseName('advert-spec');
    // As client-go writes it: MicroTime with six significant fractional digits.
    const spec = {
      holderIdentity: 'go-leader',
      leaseDurationSeconds: 15,
      acquireTime: '2026-01-30T10:00:00.123456Z',
      renewTime: '2026-01-30T10:00:01.654321Z',
      leaseTransitions: 7,
    };
    await admin.createNamespacedLease({
      namespace: cluster.namespace,
      body: { metadata: { name: leaseName, namespace: cluster.namespace }, spec: spec as never },
    });
    // client-node leaves MicroTime fields as the strings the API server sent.
    const readRaw = async () => {
      const lease = await readLease(leaseName);
      return { spec: lease.spec!, annotations: lease.metadata?.annotations ?? {} };
    };
    const before = await readRaw();

    const follower = await spawn(leaseName, 'web-ccc-1', 'alice', 'ccc');
    await eventually(
      async () => {
        const { annotations } = await readRaw();
        assert.ok(annotations[CANDIDATES_ANNOTATION]?.includes('web-ccc-1'));
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );

    const after = await readRaw();
    assert.deepEqual(after.spec, before.spec);
    assert.equal(String(after.spec.renewTime), '2026-01-30T10:00:01.654321Z');
    assert.equal(follower.eventsWhere((e) => e.event === 'started').length, 0);
  });
});
