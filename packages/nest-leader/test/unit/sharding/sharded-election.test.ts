import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  assignmentLeaseName,
  InvalidLeaderElectionOptionError,
  memberLeaseName,
  ShardedElection,
} from 'nest-leader/core';
import { MemoryShardLeaseStore } from 'nest-leader/testing';
import { balanceProblems, ELECTION, ShardWorld } from './sharded.fixture.js';

const SHARDS = 64;
const LEASE_MS = 15_000;

async function started(ids: string[], shards = SHARDS): Promise<ShardWorld> {
  const world = new ShardWorld(shards);
  for (const id of ids) world.add(id);
  await world.run(3000);
  return world;
}

/** The token each shard is owned under now, by owner. */
function tokens(world: ShardWorld): Map<number, string> {
  const result = new Map<number, string>();
  for (const member of world.members.values()) {
    for (const shard of member.election.ownedShards()) {
      result.set(shard, `${member.id}@${member.election.shardTerm(shard)!.token}`);
    }
  }
  return result;
}

describe('ShardedElection on the manual clock', () => {
  test('a pause (SIGSTOP) between the grant check and the announcements: no shard is announced after its member epoch ended', async () => {
    const world = new ShardWorld(4);
    /** Every announcement: shard, token, and whether the term was live when announced. */
    const announced: [number, number, boolean][] = [];
    let paused = false;
    const member = world.add('a', {
      callbacks: {
        onShardStarted: (term) => {
          announced.push([term.shard, term.token, term.isLive()]);
          // The first announcement of the grant's four is where the process stops, past its
          // renew deadline (10 s): no timer runs, as under SIGSTOP.
          if (!paused) {
            paused = true;
            world.clock.jump(11_000);
          }
        },
      },
    });
    const listened: boolean[] = [];
    member.election.subscribe((event) => {
      if (event.type === 'started') listened.push(event.term.isLive());
    });
    await world.run(3000);
    const first = announced[0]!;
    assert.deepEqual(
      announced.slice(0, 1),
      [[first[0], first[1], true]],
      'the first term was live at its announcement',
    );
    assert.ok(
      announced.slice(1).every(([, token]) => token > first[1]),
      `after the pause only terms of a later grant are announced: ${JSON.stringify(announced)}`,
    );
    assert.ok(
      announced.every(([, , live]) => live),
      `every announced term was live: ${JSON.stringify(announced)}`,
    );
    assert.deepEqual(
      [...new Set(announced.slice(1).map(([shard]) => shard))].sort(),
      [0, 1, 2, 3],
      'a new epoch takes all four again',
    );
    // Listeners hear of a term after its callback: the paused one reaches them dead (they can
    // tell by its call-time check), then its stop; the new epoch's four, live.
    assert.deepEqual(listened, [false, true, true, true, true]);
    await world.stopAll();
  });

  test('three members own 64 shards within ±1, each shard once, and stay so', async () => {
    const world = await started(['a', 'b', 'c']);
    assert.deepEqual(balanceProblems(world, ['a', 'b', 'c']), []);
    const before = tokens(world);
    await world.run(60_000, 500);
    assert.deepEqual(tokens(world), before, 'steady state moves nothing');
    assert.deepEqual(world.violations, []);
    await world.stopAll();
  });

  test('a join moves only the shards the newcomer takes, gracefully; the others run on', async () => {
    const world = await started(['a', 'b', 'c']);
    const before = tokens(world);
    world.add('d');
    await world.run(3000);
    assert.deepEqual(balanceProblems(world, ['a', 'b', 'c', 'd']), []);
    const after = tokens(world);
    const moved = [...after].filter(([shard, owner]) => before.get(shard) !== owner);
    assert.equal(moved.length, 16, 'the minimum: 64/4');
    assert.ok(moved.every(([, owner]) => owner.startsWith('d@')));
    const stoppedKept = [...world.members.values()]
      .flatMap((m) => m.stopped)
      .filter((t) => after.get(t.shard)?.startsWith('d@') !== true);
    assert.deepEqual(stoppedKept, [], 'no shard that stayed was interrupted');
    assert.ok(
      world.gapsMs.length === 16 && Math.max(...world.gapsMs) <= 100,
      `gaps ${world.gapsMs.join(',')}`,
    );
    assert.deepEqual(world.violations, []);
    await world.stopAll();
  });

  test('two members joining at once take their quotas; 4 → 6 moves 20 shards', async () => {
    const world = await started(['a', 'b', 'c', 'd']);
    const before = tokens(world);
    world.add('e');
    world.add('f');
    await world.run(3000);
    assert.deepEqual(balanceProblems(world, ['a', 'b', 'c', 'd', 'e', 'f']), []);
    const moved = [...tokens(world)].filter(([shard, owner]) => before.get(shard) !== owner);
    assert.equal(moved.length, 20);
    assert.deepEqual(world.violations, []);
    await world.stopAll();
  });

  test("a graceful leave moves only the leaver's shards, at once (no lease wait)", async () => {
    const world = await started(['a', 'b', 'c', 'd']);
    const before = tokens(world);
    const leaverShards = world.members.get('d')!.election.ownedShards();
    const leaving = world.members.get('d')!.election.stop();
    await world.run(500);
    await leaving;
    world.members.delete('d');
    assert.deepEqual(balanceProblems(world, ['a', 'b', 'c']), []);
    const moved = [...tokens(world)]
      .filter(([shard, owner]) => before.get(shard) !== owner)
      .map(([s]) => s);
    assert.deepEqual(
      moved.sort((x, y) => x - y),
      leaverShards,
    );
    assert.ok(Math.max(...world.gapsMs) <= 100, `gaps ${world.gapsMs.join(',')}`);
    assert.deepEqual(world.violations, []);
    await world.stopAll();
  });

  test('a graceful leave whose cached version is stale (a renewal applied, its answer lost) still releases at once', async () => {
    const world = await started(['a', 'b', 'c', 'd']);
    const leaverShards = world.members.get('d')!.election.ownedShards();
    // The API server applied a renewal of d's member Lease whose answer d never saw (the stop
    // aborted it in flight): d's cached resourceVersion is stale, its release a conflict.
    const memberLease = world.store.lease(memberLeaseName(ELECTION, 'd'));
    memberLease.set({ ...memberLease.read()!.record });
    const leaving = world.members.get('d')!.election.stop();
    await world.run(500);
    await leaving;
    const record = memberLease.read()!.record;
    assert.equal(record.holderIdentity, '', 'released over the current version');
    world.members.delete('d');
    assert.deepEqual(balanceProblems(world, ['a', 'b', 'c']), []);
    const owners = new Set([...world.ownership(['a', 'b', 'c']).values()].flat());
    assert.ok(
      leaverShards.every((shard) => owners.has(shard)),
      "the leaver's shards are owned again within 500 ms, not after leaseDuration",
    );
    assert.deepEqual(world.violations, []);
    await world.stopAll();
  });

  test("a crashed member's shards are owned again within leaseDuration + 500 ms of its last renewal", async () => {
    const world = await started(['a', 'b', 'c', 'd']);
    const crashed = world.members.get('d')!;
    const itsShards = crashed.election.ownedShards();
    crashed.connection.partitioned = true; // a crash, as the API server sees it: silence
    const lastRenewalMs = world.lastRenewalMs('d');
    let reownedAtMs: number | undefined;
    for (let t = 0; t < 30_000 && reownedAtMs === undefined; t += 100) {
      await world.run(100);
      const owners = world.ownership(['a', 'b', 'c']);
      const owned = new Set([...owners.values()].flat());
      if (itsShards.every((s) => owned.has(s))) reownedAtMs = world.clock.nowMs();
    }
    assert.ok(reownedAtMs !== undefined, 'its shards were owned again');
    const afterRenewalMs = reownedAtMs - lastRenewalMs;
    assert.ok(
      afterRenewalMs <= LEASE_MS + 500,
      `re-owned ${afterRenewalMs} ms after its last renewal`,
    );
    assert.ok(afterRenewalMs > LEASE_MS, 'not before its Lease expired by observation');
    world.members.delete('d');
    assert.deepEqual(balanceProblems(world, ['a', 'b', 'c']), []);
    assert.deepEqual(world.violations, []);
    await world.stopAll();
  });

  test('a partitioned owner stops its shards before anyone else starts them, and rejoins with a new epoch', async () => {
    const world = await started(['a', 'b', 'c', 'd']);
    const d = world.members.get('d')!;
    const epochBefore = d.election.memberEpoch!;
    d.connection.partitioned = true;
    await world.run(11_000);
    assert.deepEqual(d.election.ownedShards(), [], 'stopped at its renew deadline');
    await world.run(9_000);
    assert.deepEqual(
      balanceProblems(world, ['a', 'b', 'c']).filter((p) => p.startsWith('unowned')),
      [],
    );
    d.connection.partitioned = false;
    await world.run(20_000);
    assert.ok(d.election.memberEpoch! > epochBefore);
    assert.deepEqual(balanceProblems(world, ['a', 'b', 'c', 'd']), []);
    assert.deepEqual(world.violations, []);
    await world.stopAll();
  });

  test('a flapping member never makes two owners; the tokens of every shard only increase', async () => {
    const world = await started(['a', 'b', 'c', 'd']);
    const d = world.members.get('d')!;
    for (const [cutMs, healMs] of [
      [9_500, 3_000],
      [10_500, 1_000],
      [16_000, 2_500],
      [4_000, 6_000],
      [12_000, 500],
    ]) {
      d.connection.partitioned = true;
      await world.run(cutMs!, 50);
      d.connection.partitioned = false;
      await world.run(healMs!, 50);
    }
    await world.run(40_000);
    assert.deepEqual(balanceProblems(world, ['a', 'b', 'c', 'd']), []);
    assert.deepEqual(world.violations, []);
    await world.stopAll();
  });

  test('a member that never acknowledges a revoke is evicted; the shard moves once its epoch is over, never before', async () => {
    const world = await started(['a', 'b', 'c', 'd']);
    const d = world.members.get('d')!;
    d.connection.blind.add(assignmentLeaseName(ELECTION)); // renews, never sees the revoke
    const dShards = d.election.ownedShards();
    const e = world.add('e');
    await world.run(10_000);
    assert.deepEqual(d.election.ownedShards(), dShards, 'd never saw the revoke and works on');
    assert.ok(
      e.election.ownedShards().every((s) => !dShards.includes(s)),
      'nothing of d granted yet',
    );
    await world.run(40_000);
    const logs = [...world.members.values()].flatMap((m) => m.logger.messages());
    assert.ok(
      logs.some((m) => m.includes('did not acknowledge a revoke')),
      'the coordinator evicted d',
    );
    assert.ok(
      dShards.some((s) => e.election.shardTerm(s)),
      "e owns some of d's former shards",
    );
    d.connection.blind.clear();
    await world.run(40_000);
    assert.deepEqual(balanceProblems(world, ['a', 'b', 'c', 'd', 'e']), []);
    assert.deepEqual(world.violations, []);
    await world.stopAll();
  });

  test('a crashed coordinator: the next one re-owns its shards within leaseDuration + 500 ms of its last renewal, tokens continuing', async () => {
    const world = await started(['a', 'b', 'c']);
    const coordinator = [...world.members.values()].find((m) => m.election.isCoordinator())!;
    const itsShards = coordinator.election.ownedShards();
    const highest = Math.max(...world.highestToken.values());
    coordinator.connection.partitioned = true; // the coordinator (and member) crashes
    const lastRenewalMs = world.lastRenewalMs(coordinator.id);
    const rest = [...world.members.values()].filter((m) => m !== coordinator);
    let reownedAtMs: number | undefined;
    for (let t = 0; t < 40_000 && reownedAtMs === undefined; t += 100) {
      await world.run(100);
      const owned = new Set(rest.flatMap((m) => m.election.ownedShards()));
      if (itsShards.every((s) => owned.has(s))) reownedAtMs = world.clock.nowMs();
    }
    assert.ok(reownedAtMs !== undefined, 'its shards were owned again');
    const afterRenewalMs = reownedAtMs - lastRenewalMs;
    assert.ok(
      afterRenewalMs <= LEASE_MS + 500,
      `re-owned ${afterRenewalMs} ms after its last renewal`,
    );
    assert.equal(rest.filter((m) => m.election.isCoordinator()).length, 1);
    assert.deepEqual(
      balanceProblems(
        world,
        rest.map((m) => m.id),
      ),
      [],
    );
    assert.ok(world.starts.filter(([, , , token]) => token > highest).length > 0);
    assert.deepEqual(world.violations, []);
    await world.stopAll();
  });

  test('1,024 shards: 8 → 9 members moves at most 114 shards, balanced within ±1', async () => {
    const ids = ['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'];
    const world = await started(ids, 1024);
    assert.deepEqual(balanceProblems(world, ids), []);
    const before = tokens(world);
    world.add('m8');
    await world.run(3000);
    assert.deepEqual(balanceProblems(world, [...ids, 'm8']), []);
    const moved = [...tokens(world)].filter(([shard, owner]) => before.get(shard) !== owner);
    assert.ok(moved.length <= 114, `${moved.length} moved`);
    assert.equal(moved.length, 113);
    assert.deepEqual(world.violations, []);
    await world.stopAll();
  });

  test('options are checked at construction, naming the option', () => {
    const store = new MemoryShardLeaseStore();
    const make = (overrides: Record<string, unknown>) => () =>
      new ShardedElection({
        name: 'orders',
        shards: 8,
        store,
        identity: 'a',
        ...overrides,
      } as never);
    assert.throws(
      make({ shards: 0 }),
      (e: unknown) => e instanceof InvalidLeaderElectionOptionError && e.option === 'shards',
    );
    assert.throws(
      make({ shards: 5000 }),
      (e: unknown) => e instanceof InvalidLeaderElectionOptionError && e.option === 'shards',
    );
    assert.throws(
      make({ name: 'Orders' }),
      (e: unknown) => e instanceof InvalidLeaderElectionOptionError && e.option === 'name',
    );
    assert.throws(
      make({ drainTimeoutSeconds: -1 }),
      (e: unknown) =>
        e instanceof InvalidLeaderElectionOptionError && e.option === 'drainTimeoutSeconds',
    );
    assert.throws(
      make({ renewDeadlineSeconds: 20 }),
      (e: unknown) =>
        e instanceof InvalidLeaderElectionOptionError && e.option === 'renewDeadlineSeconds',
    );
  });
});
