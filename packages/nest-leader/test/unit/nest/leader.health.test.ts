import './support.js';
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { LeaderHealthIndicator, LeaderModule, UnknownElectionError } from 'nest-leader';
import { MemoryLock } from 'nest-leader/testing';
import { HealthController } from '../../../examples/health.module.js';
import { baseUrl, holdLeaseAs, OTHER, type Replica, SELF, startReplica } from './support.js';

/** The README's HealthController (examples/health.module.ts), with Terminus' error log silenced. */
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [LeaderHealthIndicator],
})
class HealthModule {}

async function probe(replica: Replica, path: '/healthz' | '/readyz') {
  const response = await fetch(`${await baseUrl(replica.app)}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('LeaderHealthIndicator', () => {
  let replica: Replica | undefined;
  afterEach(() => replica?.app.close());

  test('on the leader: /readyz is up with holder, identity and leaseTransitions; /healthz is up', async () => {
    replica = await startReplica({ role: 'leader', listen: true, imports: [HealthModule] });
    const ready = await probe(replica, '/readyz');
    const live = await probe(replica, '/healthz');

    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body.details, {
      leader: { status: 'up', holder: SELF, identity: SELF, leaseTransitions: 0 },
    });
    assert.equal(live.status, 200);
    assert.deepEqual(live.body.details, {
      leaderElection: { status: 'up', identity: SELF, leader: SELF, isLeader: true },
    });
  });

  test('on a follower: /readyz is down (503) naming the holder; /healthz stays up', async () => {
    replica = await startReplica({ role: 'follower', listen: true, imports: [HealthModule] });
    const ready = await probe(replica, '/readyz');
    const live = await probe(replica, '/healthz');

    assert.equal(ready.status, 503);
    assert.deepEqual(ready.body.details, {
      leader: { status: 'down', holder: OTHER, identity: SELF, leaseTransitions: 0 },
    });
    assert.equal(live.status, 200);
  });

  test('a leader wedged past its lease duration is down on /healthz (503) with the reason', async () => {
    replica = await startReplica({ role: 'leader', listen: true, imports: [HealthModule] });
    replica.clock.jump(16_000); // no renewal for longer than leaseDurationSeconds (15)

    const live = await probe(replica, '/healthz');
    assert.equal(live.status, 503);
    const detail = (live.body.details as Record<string, { status: string; message: string }>)
      .leaderElection;
    assert.equal(detail?.status, 'down');
    assert.match(detail?.message ?? '', /last renewed it 16s ago/);
  });
});

describe('LeaderHealthIndicator with a named election', () => {
  let replica: Replica | undefined;
  afterEach(() => replica?.app.close());

  async function withShard() {
    const shardLock = new MemoryLock({ name: 'shard-a' });
    replica = await startReplica({
      role: 'leader',
      imports: [
        HealthModule,
        LeaderModule.registerElection({ name: 'shard-a', leaseName: 'orders-a', lock: shardLock }),
      ],
    });
    holdLeaseAs(shardLock, replica.clock, OTHER); // shard-a is led by another replica
    await replica.clock.advance(2_000);
    return replica.app.get(LeaderHealthIndicator);
  }

  test('isLeader(name) answers for that election, keyed by its name; isLeader() for the default one', async () => {
    const indicator = await withShard();
    assert.deepEqual(indicator.isLeader('shard-a'), {
      'shard-a': { status: 'down', holder: OTHER, identity: SELF, leaseTransitions: 0 },
    });
    assert.equal(indicator.isLeader().leader.status, 'up');
    assert.throws(() => indicator.isLeader('shard-typo'), UnknownElectionError);
  });

  test('isHealthy() covers every election, each under its name', async () => {
    const indicator = await withShard();
    assert.deepEqual(indicator.isHealthy(), {
      leaderElection: {
        status: 'up',
        elections: {
          default: { identity: SELF, leader: SELF, isLeader: true },
          'shard-a': { identity: SELF, leader: OTHER, isLeader: false },
        },
      },
    });
    replica!.clock.jump(16_000); // the default election's leader is wedged
    const wedged = indicator.isHealthy().leaderElection;
    assert.equal(wedged.status, 'down');
    assert.match(
      (wedged.elections as Record<string, { message?: string }>).default?.message ?? '',
      /last renewed it 16s ago/,
    );
  });
});
