import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  balanceShards,
  formatShardAssignment,
  parseShardAssignment,
  type ShardAssignment,
} from 'nest-leader/core';

function balanced(shards: number, members: number, revision: number): ShardAssignment {
  const ids = Array.from({ length: members }, (_, i) => `orders-worker-7d9f8c6b5-${i}x`);
  const target = balanceShards(new Array<undefined>(shards).fill(undefined), ids);
  return {
    revision,
    coordinator: ids[0]!,
    shards: target.map((identity) => ({
      owner: { identity: identity!, epoch: 3 },
      token: revision,
    })),
  };
}

describe('shard assignment text', () => {
  test('round-trips, revoking shards included', () => {
    const assignment = balanced(64, 3, 7);
    const withRevoke: ShardAssignment = {
      ...assignment,
      revision: 8,
      shards: assignment.shards.map((g, s) => (s === 5 ? { ...g, revokedAt: 8 } : g)),
    };
    assert.deepEqual(parseShardAssignment(formatShardAssignment(withRevoke), 64), withRevoke);
  });

  test('1,024 shards over 8 members fit in a few hundred bytes; one token per shard stays under 24 KB', () => {
    const assignment = balanced(1024, 8, 12);
    assert.ok(formatShardAssignment(assignment).length < 1000);
    const fragmented: ShardAssignment = {
      ...assignment,
      revision: 5000,
      shards: assignment.shards.map((g, s) => ({ ...g, token: 3000 + s })),
    };
    const text = formatShardAssignment(fragmented);
    assert.ok(text.length < 24_000, `${text.length}`);
    assert.deepEqual(parseShardAssignment(text, 1024), fragmented);
  });

  test('hostile or foreign text reads as no assignment, never throws', () => {
    const good = JSON.parse(formatShardAssignment(balanced(4, 2, 2))) as Record<string, unknown>;
    const bad: unknown[] = [
      undefined,
      42,
      '{',
      'x'.repeat(300_000),
      JSON.stringify({ ...good, v: 2 }),
      JSON.stringify({ ...good, rev: -1 }),
      JSON.stringify({ ...good, s: [[3, 0, 2]] }), // runs cover 3 of 4 shards
      JSON.stringify({ ...good, s: [[4, 9, 2]] }), // owner index out of range
      JSON.stringify({ ...good, s: [[4, 0, 3]] }), // token above the revision
      JSON.stringify({ ...good, s: [[4, -1, 1, 2]] }), // revoking a shard nobody owns
      JSON.stringify({ ...good, m: [['', 1]] }),
      JSON.stringify({ ...good, m: [['a\nb', 1]] }),
    ];
    for (const value of bad)
      assert.equal(parseShardAssignment(value, 4), undefined, String(value).slice(0, 80));
    assert.equal(parseShardAssignment(JSON.stringify(good), 5), undefined); // another number of shards
    assert.ok(parseShardAssignment(JSON.stringify(good), 4));
  });
});
