/**
 * Three Nest applications (one process, each with its own credentials) on one real Lease, with
 * the demo's HealthController (/healthz, /readyz):
 * only the leader's @Cron/@Interval methods run, probes answer by role, and app.close() on
 * the leader hands over within a retry period.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cron, Interval, ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from '@nest-leader/demo/health/health.controller';
import {
  LeaderElectionService,
  LeaderHealthIndicator,
  LeaderModule,
  LeaderOnly,
  OnLeadershipAcquired,
} from 'nest-leader';
import { getTestCluster, kubeConfigFor, uniqueLeaseName } from '../support/cluster.js';
import { eventually, found } from '../support/eventually.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { FAST_TIMINGS } from '../support/candidates.js';

const cluster = getTestCluster();
const IDENTITIES = ['alice', 'bob', 'carol'] as const;
const { leaseDurationSeconds, retryPeriodSeconds } = FAST_TIMINGS;

@Injectable()
class Jobs {
  readonly runs = { cron: 0, interval: 0 };
  acquiredAtMs: number | undefined;

  @LeaderOnly()
  @Cron('* * * * * *')
  tick(): void {
    this.runs.cron++;
  }

  @Interval(250)
  @LeaderOnly()
  reconcile(): void {
    this.runs.interval++;
  }

  @OnLeadershipAcquired()
  acquired(): void {
    this.acquiredAtMs = performance.now();
  }
}

interface Replica {
  identity: string;
  app: INestApplication;
  jobs: Jobs;
  election: LeaderElectionService;
  url: string;
}

async function startReplica(identity: string, leaseName: string): Promise<Replica> {
  @Module({
    imports: [
      ScheduleModule.forRoot(),
      TerminusModule,
      LeaderModule.forRoot({
        leaseName,
        namespace: cluster.namespace,
        identity,
        lock: 'kubernetes',
        kubeConfig: kubeConfigFor(cluster, identity),
        ...FAST_TIMINGS,
      }),
    ],
    controllers: [HealthController],
    providers: [Jobs, LeaderHealthIndicator],
  })
  class AppModule {}

  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return {
    identity,
    app,
    url,
    jobs: app.get(Jobs),
    election: app.get(LeaderElectionService),
  };
}

async function status(url: string): Promise<number> {
  return (await fetch(url)).status;
}

describe('Nest applications with LeaderModule on the real kube-apiserver', () => {
  const leaseName = uniqueLeaseName('nest-apps');
  let replicas: Replica[] = [];

  before(async () => {
    for (const identity of IDENTITIES) await grantLeaseAccess(cluster, identity);
    replicas = await Promise.all(IDENTITIES.map((id) => startReplica(id, leaseName)));
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.app.close()));
    for (const identity of IDENTITIES) await revokeLeaseAccess(cluster, identity);
  });

  test("only the leader's @Cron and @Interval methods run", async () => {
    const leader = await eventually(
      () =>
        found(
          replicas.find((r) => r.election.isLeader()),
          'a leader',
        ),
      { timeoutMs: (leaseDurationSeconds + 2) * 1000, intervalMs: 10 },
    );
    for (const r of replicas) r.jobs.runs.cron = r.jobs.runs.interval = 0;

    await new Promise((r) => setTimeout(r, 3_000));

    assert.equal(leader.election.isLeader(), true);
    assert.ok(leader.jobs.runs.cron >= 2, `cron ran ${leader.jobs.runs.cron} times`);
    assert.ok(leader.jobs.runs.interval >= 8, `interval ran ${leader.jobs.runs.interval} times`);
    for (const follower of replicas.filter((r) => r !== leader)) {
      assert.deepEqual(follower.jobs.runs, { cron: 0, interval: 0 }, follower.identity);
      assert.equal(follower.election.leader, leader.identity);
    }
  });

  test('/readyz is 200 on the leader only; /healthz is 200 everywhere', async () => {
    const leader = replicas.find((r) => r.election.isLeader())!;
    for (const r of replicas) {
      assert.equal(await status(`${r.url}/healthz`), 200, `${r.identity} /healthz`);
      assert.equal(
        await status(`${r.url}/readyz`),
        r === leader ? 200 : 503,
        `${r.identity} /readyz`,
      );
    }
  });

  test('app.close() on the leader hands over within 1.2 × retryPeriod + 0.5 s; the new leader runs the jobs', async (t) => {
    const old = replicas.find((r) => r.election.isLeader())!;
    const closingAtMs = performance.now();
    await old.app.close();
    replicas = replicas.filter((r) => r !== old);

    const next = await eventually(
      () =>
        found(
          replicas.find(
            (r) => r.jobs.acquiredAtMs !== undefined && r.jobs.acquiredAtMs >= closingAtMs,
          ),
          'a new leader',
        ),
      { timeoutMs: 5_000, intervalMs: 10 },
    );
    const handoverMs = next.jobs.acquiredAtMs! - closingAtMs;
    const boundMs = (1.2 * retryPeriodSeconds + 0.5) * 1000;
    t.diagnostic(`app.close() handover: ${Math.round(handoverMs)} ms (bound ${boundMs} ms)`);
    assert.ok(handoverMs <= boundMs, `handover took ${Math.round(handoverMs)} ms`);

    const before = { ...next.jobs.runs };
    await eventually(
      () =>
        assert.ok(
          next.jobs.runs.cron > before.cron && next.jobs.runs.interval > before.interval,
          "the new leader's cron and interval",
        ),
      { timeoutMs: 2_500, intervalMs: 10 },
    );
    assert.equal(await status(`${next.url}/readyz`), 200);
  });
});
