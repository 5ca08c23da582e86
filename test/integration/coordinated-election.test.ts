/**
 * `spec.preferredHolder` and Kubernetes' coordinated leader election (KEP-4355) on a real
 * kube-apiserver started for this file with the `CoordinatedLeaderElection` feature gate and
 * `coordination.k8s.io/v1beta1` (the election controller runs inside kube-apiserver; without
 * the gate the API server drops `strategy`/`preferredHolder` from every write). Candidates are
 * real nest-leader processes (`test/support/nest-leader-candidate.ts`). Never two leaders,
 * judged from their event logs and from samples of the Lease; the fencing token never repeats.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CoordinationV1beta1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { coordinationApi, kubeConfigFor, uniqueLeaseName } from '../support/cluster.js';
import {
  COORDINATED_ELECTION_APISERVER_ARGS,
  type ControlPlane,
  startControlPlane,
} from '../support/control-plane.js';
import { ELECTOR_VERBS, grantLeaseAccess, grantRules } from '../support/rbac.js';
import { eventually, found } from '../support/eventually.js';
import { CandidateProcess, leaseTarget } from '../support/candidate-process.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import {
  assertSingleLeader,
  leadershipIntervals,
  LeaseSampler,
} from '../support/leadership-timeline.js';
import { monotonicNowMs } from '../support/monotonic-time.js';
import type { LeaderElectionTimings } from 'nest-leader';

/** The user every candidate process authenticates as. */
const USER = 'bob';
const STRATEGY = 'OldestEmulationVersion';
/** A long leaseDuration, so a handover that waited for expiry would show. */
const HANDOFF_TIMINGS: LeaderElectionTimings = {
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 1,
};
/** Short timings for coordinated mode: the controller's own pace (5 s) dominates anyway. */
const COORDINATED_TIMINGS = FAST_TIMINGS;

describe('preferredHolder and coordinated leader election (real kube-apiserver, CoordinatedLeaderElection on)', () => {
  let plane: ControlPlane;
  const processes: CandidateProcess[] = [];

  before(async () => {
    plane = await startControlPlane({ apiserverArgs: COORDINATED_ELECTION_APISERVER_ARGS });
    await grantLeaseAccess(plane, USER, ELECTOR_VERBS);
    await grantRules(plane, USER, 'leasecandidates', [
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leasecandidates'],
        verbs: ['get', 'create', 'update', 'delete'],
      },
    ]);
  });
  after(async () => {
    await Promise.all(processes.map((p) => p.dispose()));
    await plane?.stop();
  });

  async function spawn(
    leaseName: string,
    identity: string,
    timings: LeaderElectionTimings,
    extraArgs: string[] = [],
  ): Promise<CandidateProcess> {
    return CandidateProcess.startReady(
      {
        implementation: 'nest-leader',
        ...leaseTarget(plane, USER, leaseName),
        identity,
        timings,
        extraArgs,
      },
      processes,
    );
  }

  function readLease(name: string) {
    return coordinationApi(plane).readNamespacedLease({ name, namespace: plane.namespace });
  }

  function leader(candidates: readonly CandidateProcess[]): CandidateProcess | undefined {
    const open = leadershipIntervals(candidates).filter((i) => i.endedBy === 'still-leading');
    assert.ok(open.length <= 1, `at most one leads (${open.map((i) => i.identity).join(', ')})`);
    return candidates.find((c) => c.identity === open[0]?.identity);
  }

  function started(c: CandidateProcess, afterMs: number) {
    return c.events.find((e) => e.event === 'started' && e.monotonicMs > afterMs);
  }

  test('patching spec.preferredHolder hands leadership to that candidate at once (no leaseDuration wait): one more term, never two leaders', async () => {
    const leaseName = uniqueLeaseName('preferred');
    const sampler = new LeaseSampler(coordinationApi(plane), leaseName, plane.namespace);
    const candidates: CandidateProcess[] = [];
    try {
      for (const id of ['p-1', 'p-2', 'p-3']) {
        candidates.push(await spawn(leaseName, `${leaseName}-${id}`, HANDOFF_TIMINGS));
      }
      const first = await eventually(() => found(leader(candidates), 'a first leader'), {
        timeoutMs: 30_000,
      });
      const firstToken = first.events.find((e) => e.event === 'started')!.leaseTransitions!;
      const target = candidates.find((c) => c !== first)!;
      // Everyone has seen the leader: the target is a follower waiting for an unexpired Lease.
      await target.waitFor(
        (e) => e.event === 'new-leader' && e.leader === first.identity,
        10_000,
        'the target follows',
      );

      const patchedMs = monotonicNowMs();
      await coordinationApi(plane).patchNamespacedLease(
        {
          name: leaseName,
          namespace: plane.namespace,
          body: { spec: { strategy: STRATEGY, preferredHolder: target.identity } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const took = await target.waitFor(
        (e) => e.event === 'started' && e.monotonicMs > patchedMs,
        20_000,
        'the preferred holder leads',
      );
      const handoffMs = Math.round(took.monotonicMs - patchedMs);
      console.log(`# preferredHolder patched → ${target.identity} leads: ${handoffMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 3_000)); // and keeps leading
      const lease = await readLease(leaseName);

      assert.ok(handoffMs < 5_000, `at once, not after leaseDuration 15 s (took ${handoffMs} ms)`);
      assert.equal(leader(candidates), target);
      const stopped = first.events.find((e) => e.event === 'stopped' && e.monotonicMs > patchedMs);
      assert.ok(stopped && stopped.monotonicMs <= took.monotonicMs, 'the old leader stopped first');
      assert.ok(took.leaseTransitions! > firstToken, 'the fencing token increased');
      assert.equal(lease.spec?.holderIdentity, target.identity);
      assert.equal(lease.spec?.leaseTransitions, took.leaseTransitions);
      assert.equal(lease.spec?.preferredHolder, undefined, 'fulfilled, so cleared');
      assert.equal(lease.spec?.strategy, STRATEGY, "the foreign writer's strategy is kept");
      const others = candidates.filter((c) => c !== first && c !== target);
      assert.equal(started(others[0]!, 0), undefined, 'no third candidate led');
    } finally {
      await sampler.stop();
      await Promise.all(candidates.map((c) => c.dispose()));
    }
    assertSingleLeader(candidates, sampler);
  });

  test('coordinated mode: the controller picks the oldest emulation version, exactly one leads; killed, the controller elects another; stopped, its LeaseCandidate is deleted', async () => {
    const leaseName = uniqueLeaseName('coordinated');
    const sampler = new LeaseSampler(coordinationApi(plane), leaseName, plane.namespace);
    const lcApi = kubeConfigFor(plane).makeApiClient(CoordinationV1beta1Api);
    const candidateNames = async () =>
      (await lcApi.listNamespacedLeaseCandidate({ namespace: plane.namespace })).items
        .filter((lc) => lc.spec?.leaseName === leaseName)
        .map((lc) => lc.metadata!.name!)
        .sort();
    // The controller prefers the lowest emulationVersion: b, then a, then c.
    const versions: Record<string, string> = { a: '1.1.0', b: '1.0.0', c: '1.2.0' };
    const candidates: Record<string, CandidateProcess> = {};
    try {
      for (const [id, emulation] of Object.entries(versions)) {
        candidates[id] = await spawn(leaseName, `${leaseName}-${id}`, COORDINATED_TIMINGS, [
          '--coordinated-binary-version',
          '2.0.0',
          '--coordinated-emulation-version',
          emulation,
        ]);
      }
      const all = Object.values(candidates);
      const { a, b, c } = candidates as Record<'a' | 'b' | 'c', CandidateProcess>;
      await eventually(
        async () =>
          assert.deepEqual(await candidateNames(), [a.identity, b.identity, c.identity].sort()),
        { timeoutMs: 10_000 },
      );

      // 1. The controller ends with b leading alone, and the Lease names it. Candidates register
      //    one by one, so a may be alone when the controller first looks and be elected; once b
      //    has registered the controller names it preferredHolder and a yields (CI run of
      //    2026-12-02: a led first, 450 ms before b registered).
      await eventually(() => assert.equal(leader(all)?.identity, b.identity, 'b leads'), {
        timeoutMs: 60_000,
      });
      if (started(a, 0)) {
        const aStopped = a.events.find((e) => e.event === 'stopped');
        assert.ok(
          aStopped && aStopped.monotonicMs <= started(b, 0)!.monotonicMs,
          'a, elected while alone, stopped before b started',
        );
        console.log(
          '# coordinated: a was elected while alone; preferredHolder moved the Lease to b',
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 6_000)); // a controller cycle: stable
      assert.equal(leader(all), b);
      const picked = await readLease(leaseName);
      assert.equal(picked.spec?.holderIdentity, b.identity);
      assert.equal(picked.spec?.strategy, STRATEGY, 'strategy kept through our renewals');
      const bToken = b.events.find((e) => e.event === 'started')!.leaseTransitions!;
      assert.equal(picked.spec?.leaseTransitions, bToken);
      assert.ok(picked.spec?.acquireTime, 'the term was taken up with our own write');

      // 2. b is SIGKILLed: the controller elects a once b's Lease expired and its ping timed out.
      const killedMs = b.kill('SIGKILL');
      await b.exited;
      const aStarted = await a.waitFor(
        (e) => e.event === 'started' && e.monotonicMs > killedMs,
        60_000,
        'the controller elects a',
      );
      const electionMs = Math.round(aStarted.monotonicMs - killedMs);
      console.log(
        `# coordinated: leader SIGKILLed → controller elected the next in ${electionMs} ms ` +
          `(leaseDuration ${COORDINATED_TIMINGS.leaseDurationSeconds} s)`,
      );
      assert.ok(
        electionMs >= COORDINATED_TIMINGS.leaseDurationSeconds * 1000 - 1000,
        `not before b's Lease expired (${electionMs} ms)`,
      );
      assert.ok(aStarted.leaseTransitions! > bToken, 'the fencing token increased');
      assert.equal((await readLease(leaseName)).spec?.holderIdentity, a.identity);
      assert.equal(started(c, 0), undefined, 'c never led');

      // 3. a is stopped (SIGTERM): it withdraws its LeaseCandidate, releases; the controller elects c.
      const stoppedMs = a.kill('SIGTERM');
      assert.equal((await a.exited).code, 0);
      assert.deepEqual(
        await candidateNames(),
        [b.identity, c.identity].sort(),
        "a's LeaseCandidate is deleted (the killed b's stays until the API server collects it)",
      );
      const cStarted = await c.waitFor(
        (e) => e.event === 'started' && e.monotonicMs > stoppedMs,
        60_000,
        'the controller elects c',
      );
      console.log(
        `# coordinated: leader stopped (release) → controller elected the next in ` +
          `${Math.round(cStarted.monotonicMs - stoppedMs)} ms`,
      );
      assert.ok(cStarted.leaseTransitions! > aStarted.leaseTransitions!);
    } finally {
      await sampler.stop();
      await Promise.all(Object.values(candidates).map((p) => p.dispose()));
    }
    assertSingleLeader(Object.values(candidates), sampler);
  });
});
