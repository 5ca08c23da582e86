import './support.js';
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  currentShard,
  InjectElection,
  InvalidLeaderElectionOptionError,
  LeaderModule,
  LeaderOnly,
  ShardedElectionService,
  type ShardOwnershipEvent,
} from 'nest-leader';
import { ManualClock, MemoryShardLeaseStore } from 'nest-leader/testing';

const ORDERS = 'orders';
const SHARDS = 8;

/** A job of the sharded election: records which shard (and token) each run was for. */
@Injectable()
class OrderReconciler {
  readonly runs: { shard: number; token: number }[] = [];
  readonly events: string[] = [];

  constructor(@InjectElection(ORDERS) readonly orders: ShardedElectionService) {
    orders.onOwnershipChange((event: ShardOwnershipEvent) =>
      this.events.push(`${event.type} ${event.term.shard}`),
    );
  }

  @LeaderOnly(ORDERS)
  async reconcile(): Promise<void> {
    const term = currentShard(ORDERS)!;
    await Promise.resolve();
    this.runs.push({ shard: term.shard, token: term.token });
  }
}

async function replica(
  identity: string,
  store: MemoryShardLeaseStore,
  clock: ManualClock,
): Promise<{ app: INestApplication; jobs: OrderReconciler }> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      LeaderModule.registerElection({
        name: ORDERS,
        leaseName: 'orders',
        shards: SHARDS,
        shardStore: store,
        identity,
        clock,
      }),
    ],
    providers: [OrderReconciler],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return { app, jobs: app.get(OrderReconciler) };
}

describe('LeaderModule.registerElection({ shards }): a sharded election in Nest', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.map((app) => app.close()));
    apps.length = 0;
  });

  test('a @LeaderOnly() job runs once per owned shard, each run in its shard term; replicas split the shards', async () => {
    const store = new MemoryShardLeaseStore();
    const clock = new ManualClock();
    const a = await replica('pod-a', store, clock);
    const b = await replica('pod-b', store, clock);
    apps.push(a.app, b.app);
    await clock.advance(3000);

    const ownedA = a.jobs.orders.ownedShards();
    const ownedB = b.jobs.orders.ownedShards();
    assert.equal(ownedA.length, 4);
    assert.equal(ownedB.length, 4);
    assert.deepEqual(
      [...ownedA, ...ownedB].sort((x, y) => x - y),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );

    await a.jobs.reconcile();
    await b.jobs.reconcile();
    assert.deepEqual(
      a.jobs.runs.map((r) => r.shard),
      ownedA,
    );
    assert.deepEqual(
      b.jobs.runs.map((r) => r.shard),
      ownedB,
    );
    for (const run of a.jobs.runs)
      assert.equal(run.token, a.jobs.orders.shardTerm(run.shard)!.token);
    assert.equal(a.jobs.orders.shardOf('order-1'), 5); // FNV-1a 32 of "order-1" is 0x2b7fcd6d
    assert.equal(a.jobs.orders.owns('order-1'), ownedA.includes(5));
  });

  test('a replica that shuts down hands its shards over: the other owns all of them', async () => {
    const store = new MemoryShardLeaseStore();
    const clock = new ManualClock();
    const a = await replica('pod-a', store, clock);
    const b = await replica('pod-b', store, clock);
    apps.push(a.app);
    await clock.advance(3000);
    const closing = b.app.close();
    await clock.advance(1000);
    await closing;
    assert.deepEqual(a.jobs.orders.ownedShards(), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal(b.jobs.orders.ownedShards().length, 0);
    assert.ok(b.jobs.events.some((e) => e.startsWith('stopped')));
    assert.deepEqual([...a.jobs.orders.shardsPerMember()], [['pod-a', 8]]);
  });

  test('a sharded election without a Lease lock or shardStore is refused at startup, naming the option', async () => {
    await assert.rejects(
      Test.createTestingModule({
        imports: [
          LeaderModule.registerElection({
            name: ORDERS,
            leaseName: 'orders',
            shards: 8,
            lock: 'memory',
          }),
        ],
      }).compile(),
      (error: unknown) =>
        error instanceof InvalidLeaderElectionOptionError &&
        error.option === 'lock' &&
        error.election === ORDERS,
    );
    await assert.rejects(
      Test.createTestingModule({
        imports: [
          LeaderModule.registerElection({
            name: ORDERS,
            leaseName: 'orders',
            shards: 0,
            shardStore: new MemoryShardLeaseStore(),
          }),
        ],
      }).compile(),
      (error: unknown) =>
        error instanceof InvalidLeaderElectionOptionError && error.option === 'shards',
    );
  });

  test('registerElectionAsync({ shards, useFactory }) registers the same sharded election, its options from the factory', async () => {
    const store = new MemoryShardLeaseStore();
    const clock = new ManualClock();
    const CONFIG = Symbol('CONFIG');
    const asyncReplica = async (identity: string) => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          LeaderModule.registerElectionAsync({
            name: ORDERS,
            shards: SHARDS,
            shardStore: store,
            imports: [],
            inject: [CONFIG],
            useFactory: (config: { identity: string }) => ({
              leaseName: 'orders',
              identity: config.identity,
              clock,
            }),
            providers: [{ provide: CONFIG, useValue: { identity } }],
          }),
        ],
        providers: [OrderReconciler],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      apps.push(app);
      return app.get(OrderReconciler);
    };
    const a = await asyncReplica('pod-a');
    const b = await asyncReplica('pod-b');
    assert.ok(a.orders instanceof ShardedElectionService, 'a ShardedElectionService is injected');
    assert.equal(a.orders.identity, 'pod-a', "the factory's identity");
    await clock.advance(3000);
    assert.equal(a.orders.shards, SHARDS);
    assert.deepEqual(
      [...a.orders.ownedShards(), ...b.orders.ownedShards()].sort((x, y) => x - y),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
    await a.reconcile();
    assert.deepEqual(
      a.runs.map((r) => r.shard),
      a.orders.ownedShards(),
      'the @LeaderOnly() job runs once per owned shard',
    );
  });
});
