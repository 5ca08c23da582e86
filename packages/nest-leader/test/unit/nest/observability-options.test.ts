/**
 * The Nest options metrics / kubernetesEvents / podRoleLabel: what they build, per election,
 * and the metrics a scrape returns from a real Nest application (MemoryLock, ManualClock).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Controller, Get, Injectable } from '@nestjs/common';
import { PrometheusModule } from '@willsoto/nestjs-prometheus';
import { LeaderModule, LeaderOnly, NotLeaderException } from 'nest-leader';
import { ELECTION_METRIC_NAMES as M } from 'nest-leader/observability';
import { RecordingLogger } from 'nest-leader/testing';
import { Registry, register as defaultRegistry } from 'prom-client';
import { value } from '../observability/metrics.fixture.js';
import { baseUrl, type Replica, startReplica } from './support.js';

@Injectable()
class Jobs {
  @LeaderOnly()
  tick(): string {
    return 'ran';
  }

  @LeaderOnly({ onFollower: 'throw' })
  mustLead(): string {
    return 'ran';
  }
}

@Injectable()
class ShardJobs {
  @LeaderOnly('shard')
  tick(): string {
    return 'ran';
  }
}

@Controller()
class StatusController {
  @Get('status')
  status(): string {
    return 'ok';
  }
}

const running: Replica[] = [];
after(async () => {
  for (const r of running.splice(0)) await r.app.close();
});

async function replica(...args: Parameters<typeof startReplica>): Promise<Replica> {
  const r = await startReplica(...args);
  running.push(r);
  return r;
}

describe('metrics option', () => {
  it('reports the election by name and counts @LeaderOnly() calls by handler and outcome', async () => {
    const leaderRegistry = new Registry();
    const followerRegistry = new Registry();
    const leader = await replica({
      role: 'leader',
      providers: [Jobs],
      leader: { metrics: { registry: leaderRegistry } },
    });
    const follower = await replica({
      role: 'follower',
      providers: [Jobs],
      leader: { metrics: { registry: followerRegistry } },
    });
    leader.app.get(Jobs).tick();
    leader.app.get(Jobs).tick();
    follower.app.get(Jobs).tick();
    assert.throws(() => follower.app.get(Jobs).mustLead(), NotLeaderException);

    const calls = (registry: Registry, handler: string, outcome: string) =>
      value(registry, M.leaderOnlyCalls, { name: 'default', handler, outcome });
    assert.equal(await value(leaderRegistry, M.masterStatus, { name: 'default' }), 1);
    assert.equal(await value(followerRegistry, M.masterStatus, { name: 'default' }), 0);
    assert.equal(await calls(leaderRegistry, 'Jobs.tick', 'ran'), 2);
    assert.equal(await calls(followerRegistry, 'Jobs.tick', 'skipped'), 1);
    assert.equal(await calls(followerRegistry, 'Jobs.mustLead', 'rejected'), 1);
    assert.equal(await calls(followerRegistry, 'Jobs.tick', 'ran'), 0);
  });

  it('named elections inherit it from forRoot(), each reported under its own name', async () => {
    const registry = new Registry();
    const r = await replica({
      role: 'leader',
      providers: [ShardJobs],
      leader: { metrics: { registry } },
      imports: [
        LeaderModule.registerElection({ name: 'shard', leaseName: 'shard', lock: 'memory' }),
      ],
    });
    await r.clock.advance(0);
    r.app.get(ShardJobs).tick();
    assert.equal(await value(registry, M.masterStatus, { name: 'default' }), 1);
    assert.equal(await value(registry, M.masterStatus, { name: 'shard' }), 1);
    assert.equal(
      await value(registry, M.leaderOnlyCalls, {
        name: 'shard',
        handler: 'ShardJobs.tick',
        outcome: 'ran',
      }),
      1,
    );
  });

  it('metrics: true with @willsoto/nestjs-prometheus: GET /metrics serves them; a second app does not throw', async () => {
    const first = await replica({
      role: 'leader',
      listen: true,
      imports: [PrometheusModule.register()],
      controllers: [StatusController],
      leader: { metrics: true },
    });
    const second = await replica({ role: 'follower', leader: { metrics: true } });
    try {
      const text = await (await fetch(`${await baseUrl(first.app)}/metrics`)).text();
      assert.match(text, /^# TYPE leader_election_master_status gauge$/m);
      // Both apps report the default election in one process: the gauge is 1 if one leads.
      assert.match(text, /^leader_election_master_status\{name="default"\} 1$/m);
      assert.match(
        text,
        /^leader_election_observed_leader_info\{name="default",holder="pod-\w"\} 1$/m,
      );
      assert.match(text, /^process_cpu_user_seconds_total /m, "@willsoto's default metrics too");
    } finally {
      for (const r of [first, second]) {
        running.splice(running.indexOf(r), 1);
        await r.app.close();
      }
      defaultRegistry.clear();
    }
  });

  it('off by default: nothing is registered', async () => {
    defaultRegistry.clear();
    await replica({ role: 'leader' });
    assert.equal(defaultRegistry.getSingleMetric(M.masterStatus), undefined);
  });
});

describe('kubernetesEvents and podRoleLabel options', () => {
  it('on a lock that is not a Kubernetes Lease: one warning each, and the election works', async () => {
    const logger = new RecordingLogger();
    // The observer is built while the module compiles, before the application's logger is set.
    const r = await replica({
      role: 'leader',
      compileLogger: logger,
      leader: { kubernetesEvents: true, podRoleLabel: true },
    });
    assert.ok(r.election.isLeader());
    const warnings = logger.messages('warn');
    assert.equal(warnings.length, 2, JSON.stringify(logger.lines));
    for (const [index, option] of ['kubernetesEvents', 'podRoleLabel'].entries()) {
      assert.match(
        warnings[index]!,
        new RegExp(
          `^${option} is on for election "default", but it elects on .+, not a Kubernetes ` +
            `Lease: ${option} does nothing there\\.$`,
        ),
      );
    }
  });
});
