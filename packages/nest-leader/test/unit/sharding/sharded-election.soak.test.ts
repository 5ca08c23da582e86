import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { balanceProblems, type SimMember, ShardWorld } from './sharded.fixture.js';

/**
 * Seeded random faults on the manual clock until at least `SHARD_SOAK_MOVES` shard moves
 * (default 400; the long mode: `SHARD_SOAK_MOVES=10000`): joins, graceful leaves, crashes,
 * partitions healed later, members blind to the assignment — checked at every shard start and
 * every 100 ms by every member's own view (never two owners, tokens only increase), and
 * balanced once the faults stop.
 */
const MOVES = Number(process.env.SHARD_SOAK_MOVES ?? 400);
const SEED = Number(process.env.SHARD_SOAK_SEED ?? 36);

/** mulberry32: a small seeded PRNG, so a failing run can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('ShardedElection soak on the manual clock', () => {
  test(`${MOVES}+ moves under seeded random faults (seed ${SEED}): never two owners, tokens increasing, balanced after`, async (t) => {
    const next = random(SEED);
    const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)]!;
    const world = new ShardWorld(64);
    let joined = 0;
    const join = () => world.add(`m${joined++}`);
    for (let i = 0; i < 4; i++) join();
    await world.run(3000);
    const firstStarts = world.starts.length;
    const gone = new Set<string>();
    const faults: Record<string, number> = {};
    /** Members that left or crashed, checked by their own view until their epoch is surely over. */
    const retiring: { member: SimMember; untilMs: number }[] = [];
    // A schedule that leaves no member able to own (all partitioned) makes no moves: bounded.
    for (let round = 0; world.starts.length - firstStarts < MOVES; round++) {
      assert.ok(
        round < MOVES,
        `moves stalled at ${world.starts.length - firstStarts} after ${round} fault rounds`,
      );
      // A crashed process has no view once its deadline passed: let it go (its timers too).
      for (const entry of retiring.splice(0)) {
        if (world.clock.nowMs() < entry.untilMs) retiring.push(entry);
        else {
          world.members.delete(entry.member.id);
          void entry.member.election.stop();
        }
      }
      const live = [...world.members.values()].filter((m) => !gone.has(m.id));
      const action =
        live.length <= 2
          ? 'join'
          : pick(['join', 'leave', 'crash', 'partition', 'blind', 'heal', 'wait']);
      faults[action] = (faults[action] ?? 0) + 1;
      if (action === 'join' && live.length < 7) join();
      else if (action === 'leave') {
        const member = pick(live);
        gone.add(member.id);
        void member.election.stop();
        retiring.push({ member, untilMs: world.clock.nowMs() + 30_000 });
      } else if (action === 'crash') {
        const member = pick(live);
        gone.add(member.id);
        member.connection.partitioned = true;
        retiring.push({ member, untilMs: world.clock.nowMs() + 30_000 });
      } else if (action === 'partition') pick(live).connection.partitioned = true;
      else if (action === 'blind') pick(live).connection.blind.add('orders-shards');
      else if (action === 'heal') {
        const member = pick(live);
        member.connection.partitioned = false;
        member.connection.blind.clear();
      }
      await world.run(500 + Math.floor(next() * 20_000), 100);
    }
    // Faults stop: heal everyone still running; the survivors converge.
    const survivors = [...world.members.values()].filter((m) => !gone.has(m.id));
    for (const member of survivors) {
      member.connection.partitioned = false;
      member.connection.blind.clear();
    }
    for (const id of gone) world.members.delete(id);
    await world.run(60_000, 500);
    const moves = world.starts.length - firstStarts;
    t.diagnostic(
      `${moves} moves, faults ${JSON.stringify(faults)}, ${world.violations.length} violations`,
    );
    assert.deepEqual(world.violations, []);
    assert.deepEqual(
      balanceProblems(
        world,
        survivors.map((m) => m.id),
      ),
      [],
    );
    await world.stopAll();
  });
});
