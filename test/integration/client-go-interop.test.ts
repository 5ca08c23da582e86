/**
 * nest-leader and client-go's own `tools/leaderelection` on one Lease, both as real OS
 * processes against the real kube-apiserver: the leader is SIGTERMed (release) and SIGKILLed
 * (crash) over and over, handing over in all four directions (client-go → nest-leader,
 * nest-leader → client-go, and each to itself). Never two leaders, judged from both sides'
 * event logs and from samples of the Lease; each side takes the other's released Lease without
 * waiting for it to expire; after a crash nobody starts before leaseDuration has passed since
 * the crashed leader's last write.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SCHEDULE_LEDGER_ANNOTATION } from 'nest-leader/core';
import { coordinationApi, getTestCluster, uniqueLeaseName } from '../support/cluster.js';
import { ELECTOR_VERBS, grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { FAST_TIMINGS } from '../support/candidates.js';
import {
  buildClientGoCandidate,
  CandidateProcess,
  type Implementation,
  leadingProcess,
  leaseTarget,
} from '../support/candidate-process.js';
import {
  assertSingleLeader,
  lastWriteLowerBoundMs,
  LeaseSampler,
} from '../support/leadership-timeline.js';

const cluster = getTestCluster();
const { leaseDurationSeconds, retryPeriodSeconds } = FAST_TIMINGS;
const LEASE_MS = leaseDurationSeconds * 1000;
const RETRY_MS = retryPeriodSeconds * 1000;
/** Acquire retries wait retryPeriod × [1, 1 + jitter): client-go's JitterFactor 1.2, ours 0.2. */
const ACQUIRE_JITTER: Record<Implementation, number> = { 'client-go': 1.2, 'nest-leader': 0.2 };
/** Request latency and process scheduling on a loaded 2-core machine. */
const SLACK_MS = 1000;
/** The user each implementation authenticates as (both with exactly the elector's RBAC). */
const USER: Record<Implementation, string> = { 'client-go': 'alice', 'nest-leader': 'bob' };
const SHORT: Record<Implementation, string> = { 'client-go': 'go', 'nest-leader': 'ts' };
/** The implementation of a candidate of this file (client-go or nest-leader, never python). */
const implementationOf = (candidate: CandidateProcess) =>
  candidate.implementation as Implementation;

interface Handover {
  from: CandidateProcess;
  to: CandidateProcess;
  signal: 'SIGTERM' | 'SIGKILL';
  killedMs: number;
  startedMs: number;
}

describe('interoperating with client-go on one Lease (real processes, real kube-apiserver)', () => {
  const processes: CandidateProcess[] = [];
  let counter = 0;

  before(async () => {
    for (const user of Object.values(USER)) await grantLeaseAccess(cluster, user, ELECTOR_VERBS);
    const startedMs = performance.now();
    await buildClientGoCandidate();
    console.log(`# client-go candidate ready in ${Math.round(performance.now() - startedMs)} ms`);
  });
  after(async () => {
    await Promise.all(processes.map((p) => p.dispose()));
    for (const user of Object.values(USER)) await revokeLeaseAccess(cluster, user);
  });

  /** SIGKILLs what still runs on `leaseName` (its intervals end there: after the checks' window). */
  async function disposeAll(leaseName: string) {
    await Promise.all(processes.filter((p) => p.leaseName === leaseName).map((p) => p.dispose()));
  }

  async function spawnCandidate(
    implementation: Implementation,
    leaseName: string,
  ): Promise<CandidateProcess> {
    return CandidateProcess.startReady(
      {
        implementation,
        ...leaseTarget(cluster, USER[implementation], leaseName),
        identity: `${SHORT[implementation]}-${++counter}`,
        timings: FAST_TIMINGS,
      },
      processes,
    );
  }

  /** Waits until `follower` has seen `leader` hold the Lease (it is a follower now). */
  async function followerOf(follower: CandidateProcess, leader: CandidateProcess) {
    await follower.waitFor(
      (e) => e.event === 'new-leader' && e.leader === leader.identity,
      LEASE_MS + 3 * RETRY_MS,
      `new-leader ${leader.identity}`,
    );
  }

  async function handOver(
    leader: CandidateProcess,
    follower: CandidateProcess,
    signal: Handover['signal'],
  ): Promise<Handover> {
    await followerOf(follower, leader);
    const killedMs = leader.kill(signal);
    const started = await follower.waitFor(
      (e) => e.event === 'started' && e.monotonicMs > killedMs,
      2 * LEASE_MS + 3 * RETRY_MS,
      'started after the kill',
    );
    const exit = await leader.exited;
    if (signal === 'SIGTERM') assert.equal(exit.code, 0, `${leader.describe()} exits 0 on SIGTERM`);
    return { from: leader, to: follower, signal, killedMs, startedMs: started.monotonicMs };
  }

  function describeHandover(h: Handover): string {
    const ms = Math.round(h.startedMs - h.killedMs);
    return `${h.from.implementation} → ${h.to.implementation} ${h.signal}: ${ms} ms`;
  }

  test("a client-go leader keeps the Lease's schedule ledger annotation through its acquisition and renewals", async () => {
    const leaseName = uniqueLeaseName('ledger-go');
    const ledger = '{"v":1,"jobs":{"Billing.close":{"c":["2026-01-01T00:00:00.000Z",4]}}}';
    await coordinationApi(cluster).createNamespacedLease({
      namespace: cluster.namespace,
      body: {
        metadata: {
          name: leaseName,
          namespace: cluster.namespace,
          annotations: { [SCHEDULE_LEDGER_ANNOTATION]: ledger },
        },
        spec: { holderIdentity: '', leaseDurationSeconds, leaseTransitions: 4 },
      },
    });

    const leader = await spawnCandidate('client-go', leaseName);
    await leader.waitFor((e) => e.event === 'started', LEASE_MS + 3 * RETRY_MS, 'started');
    const acquired = await readLease(leaseName);
    await new Promise((resolve) => setTimeout(resolve, 3 * RETRY_MS));
    const renewed = await readLease(leaseName);
    await disposeAll(leaseName);

    assert.equal(acquired.spec!.holderIdentity, leader.identity);
    assert.equal(acquired.spec!.leaseTransitions, 5);
    assert.notEqual(
      renewed.metadata!.resourceVersion,
      acquired.metadata!.resourceVersion,
      'it renewed',
    );
    assert.equal(acquired.metadata!.annotations?.[SCHEDULE_LEDGER_ANNOTATION], ledger);
    assert.equal(renewed.metadata!.annotations?.[SCHEDULE_LEDGER_ANNOTATION], ledger);
  });

  function readLease(name: string) {
    return coordinationApi(cluster).readNamespacedLease({ name, namespace: cluster.namespace });
  }

  test('the leader is SIGTERMed and SIGKILLed in turn: handovers in all four directions, never two leaders', async () => {
    const leaseName = uniqueLeaseName('interop');
    const sampler = new LeaseSampler(coordinationApi(cluster), leaseName, cluster.namespace);
    const directions: [Implementation, Implementation][] = [
      ['client-go', 'nest-leader'],
      ['nest-leader', 'nest-leader'],
      ['nest-leader', 'client-go'],
      ['client-go', 'client-go'],
    ];
    const handovers: Handover[] = [];
    try {
      let leader = await spawnCandidate('client-go', leaseName);
      await leader.waitFor((e) => e.event === 'started', LEASE_MS + 3 * RETRY_MS, 'started');
      for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
        for (const [from, to] of directions) {
          assert.equal(leader.implementation, from);
          const follower = await spawnCandidate(to, leaseName);
          const handover = await handOver(leader, follower, signal);
          handovers.push(handover);
          console.log(`# ${describeHandover(handover)}`);
          leader = follower;
        }
      }
    } finally {
      await sampler.stop();
      await disposeAll(leaseName);
    }

    assertSingleLeader(
      processes.filter((p) => p.leaseName === leaseName),
      sampler,
    );
    for (const h of handovers) {
      const ms = h.startedMs - h.killedMs;
      const jitter = ACQUIRE_JITTER[implementationOf(h.to)];
      if (h.signal === 'SIGTERM') {
        // Released: the follower takes it at its next attempt, not after the Lease expires.
        const boundMs = (1 + jitter) * RETRY_MS + SLACK_MS;
        assert.ok(ms <= boundMs, `${describeHandover(h)} > ${boundMs} ms`);
      } else {
        // Crashed: nobody may start before leaseDuration after the crashed leader's last write.
        const lastWriteMs = lastWriteLowerBoundMs(sampler.samples, h.from.identity);
        assert.ok(lastWriteMs !== undefined, `samples show ${h.from.identity}'s last write`);
        assert.ok(
          h.startedMs >= lastWriteMs + LEASE_MS,
          `${describeHandover(h)}: started ${Math.round(h.startedMs - lastWriteMs)} ms after ` +
            `the last write, before leaseDuration ${LEASE_MS} ms`,
        );
        const boundMs = LEASE_MS + (1 + jitter) * RETRY_MS + SLACK_MS;
        assert.ok(ms <= boundMs, `${describeHandover(h)} > ${boundMs} ms`);
      }
    }
    const seen = new Set(handovers.map((h) => `${h.from.implementation}→${h.to.implementation}`));
    assert.equal(seen.size, 4, `all four directions: ${[...seen].join(', ')}`);
  });

  test('two client-go and two nest-leader candidates race for the Lease after every kill: one leader at a time', async () => {
    const leaseName = uniqueLeaseName('interop-race');
    const sampler = new LeaseSampler(coordinationApi(cluster), leaseName, cluster.namespace);
    const running: CandidateProcess[] = [];
    const winners: Implementation[] = [];
    try {
      for (const implementation of [
        'client-go',
        'nest-leader',
        'client-go',
        'nest-leader',
      ] as const) {
        running.push(await spawnCandidate(implementation, leaseName));
      }
      for (const signal of ['SIGTERM', 'SIGKILL', 'SIGTERM', 'SIGKILL'] as const) {
        const leader = await leadingProcess(running, LEASE_MS + 3 * RETRY_MS);
        for (const follower of running.filter((p) => p !== leader)) {
          await followerOf(follower, leader);
        }
        const killedMs = leader.kill(signal);
        await leader.exited;
        running.splice(running.indexOf(leader), 1);
        const next = await leadingProcess(running, 2 * LEASE_MS + 3 * RETRY_MS, killedMs);
        winners.push(implementationOf(next));
        console.log(`# race: ${leader.implementation} ${signal} → ${next.implementation}`);
        running.push(await spawnCandidate(implementationOf(leader), leaseName));
      }
    } finally {
      await sampler.stop();
      await disposeAll(leaseName);
    }
    assertSingleLeader(
      processes.filter((p) => p.leaseName === leaseName),
      sampler,
    );
    assert.equal(winners.length, 4);
  });
});
