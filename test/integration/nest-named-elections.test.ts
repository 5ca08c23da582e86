/**
 * Three Nest applications (one process, each with its own credentials: alice, bob, carol), each
 * registering the same three named elections on three real Leases:
 * no election ever has two leaders, `@LeaderOnly('x')` work runs only on x's holder, and closing
 * the application that leads two elections hands over exactly those two within the release bound
 * while the third election's leader is undisturbed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import {
  getLeaderElectionToken,
  getLeaderElectorToken,
  type ManagedElector,
  type LeaderElectionService,
  LeaderModule,
  LeaderOnly,
  type LeaderTerm,
  OnLeadershipAcquired,
  OnLeadershipLost,
} from 'nest-leader';
import {
  coordinationApi,
  getTestCluster,
  kubeConfigFor,
  uniqueLeaseName,
} from '../support/cluster.js';
import { eventually, found } from '../support/eventually.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { FAST_TIMINGS, summarize } from '../support/candidates.js';

const cluster = getTestCluster();
const IDENTITIES = ['alice', 'bob', 'carol'] as const;
const ELECTIONS = ['orders-a', 'orders-b', 'orders-c'] as const;
type Election = (typeof ELECTIONS)[number];
const { leaseDurationSeconds, retryPeriodSeconds } = FAST_TIMINGS;
const TICK_MS = 100;

/** Leader-only work of each election, counted on this instance. */
@Injectable()
class ShardWork {
  readonly runs: Record<Election, number> = { 'orders-a': 0, 'orders-b': 0, 'orders-c': 0 };
  /** Runs while this instance's election service said it did not lead (must stay empty). */
  readonly runsWhileNotLeading: string[] = [];
  readonly acquiredAtMs: Partial<Record<Election, number[]>> = {};
  readonly lost: Partial<Record<Election, number[]>> = {};
  elections!: Record<Election, LeaderElectionService>;

  @Interval(TICK_MS)
  @LeaderOnly('orders-a')
  tickA(): void {
    this.ran('orders-a');
  }

  @LeaderOnly('orders-b')
  @Interval(TICK_MS)
  tickB(): void {
    this.ran('orders-b');
  }

  @Interval(TICK_MS)
  @LeaderOnly({ election: 'orders-c' })
  tickC(): void {
    this.ran('orders-c');
  }

  @OnLeadershipAcquired('orders-a')
  acquiredA(): void {
    this.acquired('orders-a');
  }

  @OnLeadershipAcquired('orders-b')
  acquiredB(): void {
    this.acquired('orders-b');
  }

  @OnLeadershipAcquired('orders-c')
  acquiredC(): void {
    this.acquired('orders-c');
  }

  @OnLeadershipLost('orders-c')
  lostC(term: LeaderTerm): void {
    (this.lost['orders-c'] ??= []).push(term.leaseTransitions);
  }

  private ran(election: Election): void {
    this.runs[election]++;
    if (!this.elections[election].isLeader()) this.runsWhileNotLeading.push(election);
  }

  private acquired(election: Election): void {
    (this.acquiredAtMs[election] ??= []).push(performance.now());
  }
}

interface Replica {
  identity: string;
  app: INestApplication;
  work: ShardWork;
  elections: Record<Election, LeaderElectionService>;
}

async function startReplica(identity: string, leaseNames: Record<Election, string>) {
  const defaults = {
    namespace: cluster.namespace,
    identity,
    lock: 'kubernetes' as const,
    kubeConfig: kubeConfigFor(cluster, identity),
    ...FAST_TIMINGS,
  };
  @Module({
    imports: [
      ScheduleModule.forRoot(),
      ...ELECTIONS.map((name) =>
        LeaderModule.registerElection({ name, leaseName: leaseNames[name], ...defaults }),
      ),
    ],
    providers: [ShardWork],
  })
  class AppModule {}

  const app = await NestFactory.create(AppModule, { logger: false });
  const elections = Object.fromEntries(
    ELECTIONS.map((name) => [name, app.get<LeaderElectionService>(getLeaderElectionToken(name))]),
  ) as Record<Election, LeaderElectionService>;
  const work = app.get(ShardWork);
  work.elections = elections;
  await app.init();
  return { identity, app, work, elections };
}

/** Samples every election's leaders across the replicas every 20 ms. */
function sampleLeaders(replicas: () => readonly Replica[]) {
  const twoLeaders: { election: Election; leaders: string[] }[] = [];
  const samplesWithoutLeader: Record<Election, number> = {
    'orders-a': 0,
    'orders-b': 0,
    'orders-c': 0,
  };
  let samples = 0;
  const timer = setInterval(() => {
    samples++;
    for (const election of ELECTIONS) {
      const leaders = replicas()
        .filter((r) => r.elections[election].isLeader())
        .map((r) => r.identity);
      if (leaders.length > 1) twoLeaders.push({ election, leaders });
      if (leaders.length === 0) samplesWithoutLeader[election]++;
    }
  }, 20);
  return {
    twoLeaders,
    samplesWithoutLeader,
    get samples() {
      return samples;
    },
    stop: () => clearInterval(timer),
  };
}

describe('three Nest applications × three named elections on the real kube-apiserver', () => {
  const prefix = uniqueLeaseName('named');
  const leaseNames = Object.fromEntries(
    ELECTIONS.map((name) => [name, `${prefix}-${name}`]),
  ) as Record<Election, string>;
  let replicas: Replica[] = [];
  let sampler: ReturnType<typeof sampleLeaders>;

  before(async () => {
    for (const identity of IDENTITIES) await grantLeaseAccess(cluster, identity);
    // carol takes all three free Leases; once bob and alice follow, carol's orders-c elector
    // alone stops (and releases): one of them takes orders-c, and carol keeps a and b. (A
    // restarted replica no longer takes back a Lease naming it that it did not write, so a
    // pre-made Lease cannot hand orders-c to bob.)
    const carol = await startReplica('carol', leaseNames);
    replicas = [carol];
    sampler = sampleLeaders(() => replicas);
    await eventually(
      () =>
        assert.ok(
          ELECTIONS.every((e) => carol.elections[e].isLeader()),
          'carol leading every election',
        ),
      { timeoutMs: (leaseDurationSeconds + 2) * 1000, intervalMs: 10 },
    );
    replicas.push(await startReplica('bob', leaseNames));
    replicas.push(await startReplica('alice', leaseNames));
    await eventually(
      () =>
        assert.ok(
          replicas.every((r) => r.elections['orders-c'].leader === 'carol'),
          'bob and alice following carol on orders-c',
        ),
      { timeoutMs: (leaseDurationSeconds + 2) * 1000, intervalMs: 10 },
    );
    await carol.app.get<ManagedElector>(getLeaderElectorToken('orders-c')).stop();
  });
  after(async () => {
    sampler.stop();
    await Promise.all(replicas.map((r) => r.app.close()));
    for (const identity of IDENTITIES) await revokeLeaseAccess(cluster, identity);
  });

  const byIdentity = (identity: string) => replicas.find((r) => r.identity === identity)!;
  const leaderOf = (election: Election) => replicas.find((r) => r.elections[election].isLeader());

  test('carol leads orders-a and orders-b, bob or alice orders-c; each Lease names its leader', async () => {
    await eventually(() => found(leaderOf('orders-c'), 'bob or alice leading orders-c'), {
      timeoutMs: (leaseDurationSeconds + 2) * 1000,
      intervalMs: 10,
    });
    assert.equal(leaderOf('orders-a')?.identity, 'carol');
    assert.equal(leaderOf('orders-b')?.identity, 'carol');
    assert.notEqual(leaderOf('orders-c')?.identity, 'carol');
    const api = coordinationApi(cluster);
    for (const election of ELECTIONS) {
      const lease = await api.readNamespacedLease({
        name: leaseNames[election],
        namespace: cluster.namespace,
      });
      assert.equal(lease.spec?.holderIdentity, leaderOf(election)?.identity, election);
      // carol's orders-c elector was stopped in the set-up: it no longer observes that Lease.
      const observers = replicas.filter((r) => election !== 'orders-c' || r.identity !== 'carol');
      for (const r of observers) {
        assert.equal(r.elections[election].leader, leaderOf(election)?.identity, r.identity);
      }
    }
  });

  test("@LeaderOnly('x') work runs only on x's holder, counted per instance", async () => {
    for (const r of replicas) {
      for (const election of ELECTIONS) r.work.runs[election] = 0;
    }
    await new Promise((r) => setTimeout(r, 2_000));

    for (const election of ELECTIONS) {
      const leader = leaderOf(election)!;
      const counts = replicas.map((r) => `${r.identity}=${r.work.runs[election]}`).join(' ');
      assert.ok(leader.work.runs[election] >= 10, `${election}: ${counts}`);
      for (const r of replicas.filter((r) => r !== leader)) {
        assert.equal(
          r.work.runs[election],
          0,
          `${election} ran on follower ${r.identity}: ${counts}`,
        );
      }
    }
    for (const r of replicas) assert.deepEqual(r.work.runsWhileNotLeading, [], r.identity);
  });

  test('closing carol hands over exactly orders-a and orders-b within 1.2 × retryPeriod + 0.5 s; the orders-c leader is undisturbed', async (t) => {
    const carol = byIdentity('carol');
    const bob = leaderOf('orders-c')!;
    const termC = bob.elections['orders-c'].term!;
    const acquiredC = () =>
      Object.fromEntries(
        replicas.map((r) => [r.identity, r.work.acquiredAtMs['orders-c']?.length ?? 0]),
      );
    const acquiredCBefore = acquiredC();
    const withoutLeaderCBefore = sampler.samplesWithoutLeader['orders-c'];

    const closingAtMs = performance.now();
    await carol.app.close();
    const closedAtMs = performance.now();
    replicas = replicas.filter((r) => r !== carol);

    const boundMs = (1.2 * retryPeriodSeconds + 0.5) * 1000;
    const handoverMs: Record<string, number> = {};
    for (const election of ['orders-a', 'orders-b'] as const) {
      const next = await eventually(
        () =>
          found(
            replicas.find((r) =>
              (r.work.acquiredAtMs[election] ?? []).some((atMs) => atMs >= closingAtMs),
            ),
            `a new leader of ${election}`,
          ),
        { timeoutMs: 5_000, intervalMs: 10 },
      );
      const atMs = next.work.acquiredAtMs[election]!.find((a) => a >= closingAtMs)!;
      handoverMs[election] = atMs - closingAtMs;
      t.diagnostic(
        `${election}: carol → ${next.identity} in ${Math.round(handoverMs[election])} ms ` +
          `(app.close() took ${Math.round(closedAtMs - closingAtMs)} ms; bound ${boundMs} ms)`,
      );
    }
    const { medianMs, maxMs } = summarize(Object.values(handoverMs));
    t.diagnostic(`handover of the two elections: median ${medianMs} ms, max ${maxMs} ms`);
    for (const [election, ms] of Object.entries(handoverMs)) {
      assert.ok(ms <= boundMs, `${election} handover took ${Math.round(ms)} ms`);
    }

    // The third election: same leader, same term, no event, never leaderless meanwhile.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(bob.elections['orders-c'].isLeader(), true);
    assert.equal(bob.elections['orders-c'].term, termC, 'the same term object: never ended');
    assert.equal(termC.signal.aborted, false);
    const { carol: _closed, ...acquiredCBeforeOthers } = acquiredCBefore;
    assert.deepEqual(acquiredC(), acquiredCBeforeOthers);
    assert.equal(bob.work.lost['orders-c'], undefined);
    assert.equal(sampler.samplesWithoutLeader['orders-c'], withoutLeaderCBefore);
  });

  test('no election ever had two leaders at one sample', (t) => {
    sampler.stop();
    t.diagnostic(`${sampler.samples} samples × ${ELECTIONS.length} elections, every 20 ms`);
    assert.ok(sampler.samples > 50, `${sampler.samples} samples`);
    assert.deepEqual(sampler.twoLeaders, []);
  });
});
