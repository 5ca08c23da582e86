import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { balanceShards } from 'nest-leader/core';

const members = (n: number) => Array.from({ length: n }, (_, i) => `m${i}`);

function counts(target: (string | undefined)[]): Map<string, number> {
  const result = new Map<string, number>();
  for (const owner of target) if (owner) result.set(owner, (result.get(owner) ?? 0) + 1);
  return result;
}

function moved(before: (string | undefined)[], after: (string | undefined)[]): number {
  return before.filter((owner, shard) => owner !== undefined && owner !== after[shard]).length;
}

function assertBalanced(target: (string | undefined)[], live: string[]): void {
  const byMember = counts(target);
  const floor = Math.floor(target.length / live.length);
  for (const member of live) {
    const owned = byMember.get(member) ?? 0;
    assert.ok(owned === floor || owned === floor + 1, `${member} owns ${owned}, not ${floor}(+1)`);
  }
  assert.equal(target.filter((o) => o === undefined).length, 0);
}

describe('balanceShards: ±1 of N/R with the fewest moves', () => {
  test('spreads unowned shards within ±1 over the members', () => {
    const target = balanceShards(new Array<undefined>(64).fill(undefined), members(3));
    assertBalanced(target, members(3));
  });

  test('8 → 9 members of 1,024 shards moves 113 shards (the minimum), all to the newcomer', () => {
    const eight = balanceShards(new Array<undefined>(1024).fill(undefined), members(8));
    const nine = balanceShards(eight, members(9));
    assertBalanced(nine, members(9));
    assert.equal(moved(eight, nine), 113);
    assert.ok(nine.every((owner, shard) => owner === eight[shard] || owner === 'm8'));
  });

  test("9 → 8 members moves only the leaver's shards", () => {
    const nine = balanceShards(new Array<undefined>(1024).fill(undefined), members(9));
    const leaver = 'm4';
    const left = members(9).filter((m) => m !== leaver);
    const current = nine.map((owner) => (owner === leaver ? undefined : owner));
    const eight = balanceShards(current, left);
    assertBalanced(eight, left);
    assert.equal(moved(current, eight), 0);
    assert.equal(counts(nine).get(leaver), nine.filter((o, s) => o !== eight[s]).length);
  });

  test('is stable: balancing a balanced assignment moves nothing', () => {
    const once = balanceShards(new Array<undefined>(100).fill(undefined), members(7));
    assert.deepEqual(balanceShards(once, members(7)), once);
  });

  test('two members joining at once take only their quotas', () => {
    const four = balanceShards(new Array<undefined>(64).fill(undefined), members(4));
    const six = balanceShards(four, members(6));
    assertBalanced(six, members(6));
    assert.equal(moved(four, six), 20); // 64/6 → 10 or 11 each; the two newcomers take 10 each
  });

  test('a move under way keeps its targets: the member acknowledging last does not get the larger quota', () => {
    const eight = balanceShards(new Array<undefined>(1024).fill(undefined), members(8));
    const target = balanceShards(eight, members(9));
    // m0…m6 acknowledged and their shards went to m8; m7's revokes are still pending.
    const revoking = new Set<number>();
    const midway = eight.map((owner, shard) => {
      if (target[shard] === owner) return owner;
      if (owner === 'm7') {
        revoking.add(shard);
        return owner;
      }
      return 'm8';
    });
    assert.ok(revoking.size > 0);
    assert.deepEqual(balanceShards(midway, members(9), revoking), target);
  });

  test('without members nothing is targeted', () => {
    assert.deepEqual(balanceShards(['a', 'b'], []), [undefined, undefined]);
  });
});
