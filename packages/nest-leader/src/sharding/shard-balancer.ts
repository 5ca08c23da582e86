/**
 * Where every shard should be: each live member owns ⌊N/R⌋ or ⌈N/R⌉ shards, and as few shards
 * as possible change owner (a sticky assignor, as Kafka's cooperative-sticky one: keep what is
 * owned, move only the surplus and the orphans). Pure and deterministic. Framework-free.
 */

/**
 * The target owner of each shard.
 *
 * Quotas: with N shards and R members, `N mod R` members may own ⌈N/R⌉, the others ⌊N/R⌋; the
 * larger quotas go to the members that own the most now (ties: identity order), so nobody gives
 * up a shard it could keep. Each member keeps its lowest-numbered shards up to its quota; the
 * rest, and the shards of nobody live, go in shard order to the members below quota, in
 * identity order. Moves are therefore the minimum: from R to R + 1 members only the shards the
 * newcomer must take (⌊N/(R+1)⌋ or ⌈N/(R+1)⌉: 113 of 1,024 from 8 to 9), and when a member
 * leaves, only its shards.
 *
 * While a move is under way the shards being taken from their owners (`revoking`) still count
 * as theirs, but not when ordering the quotas, and they are the last an owner keeps: the targets
 * stay what they were when the move began, so a member whose acknowledgement comes last is not
 * handed the larger quota, and no revoke has to be taken back.
 *
 * @param current - each shard's current owner identity (`undefined`: none, or not live)
 * @param members - identities of the live members (any order, no duplicates)
 * @param revoking - shards whose owner is being asked to stop them
 * @returns the target owner of each shard (all `undefined` without members)
 */
export function balanceShards(
  current: readonly (string | undefined)[],
  members: readonly string[],
  revoking: ReadonlySet<number> = new Set(),
): (string | undefined)[] {
  const shards = current.length;
  if (members.length === 0) return current.map(() => undefined);
  const live = new Set(members);
  const owned = new Map<string, number[]>(members.map((m) => [m, []]));
  const orphans: number[] = [];
  current.forEach((owner, shard) => {
    if (owner !== undefined && live.has(owner)) owned.get(owner)!.push(shard);
    else orphans.push(shard);
  });
  const byIdentity = [...members].sort(compareText);
  // Settled shards first (ascending), then those being revoked: what an owner keeps first.
  for (const mine of owned.values()) {
    mine.sort((a, b) => Number(revoking.has(a)) - Number(revoking.has(b)) || a - b);
  }
  const settled = (member: string) => owned.get(member)!.filter((s) => !revoking.has(s)).length;
  const byHoldings = [...byIdentity].sort((a, b) => settled(b) - settled(a));
  const floor = Math.floor(shards / members.length);
  const larger = shards % members.length;
  const quota = new Map<string, number>(
    byHoldings.map((m, i) => [m, floor + (i < larger ? 1 : 0)]),
  );

  const target = current.map((): string | undefined => undefined);
  const pool = [...orphans];
  const missingOf = new Map<string, number>();
  for (const member of byIdentity) {
    const mine = owned.get(member)!;
    const keep = Math.min(mine.length, quota.get(member)!);
    for (const shard of mine.slice(0, keep)) target[shard] = member;
    pool.push(...mine.slice(keep));
    missingOf.set(member, quota.get(member)! - keep);
  }
  pool.sort((a, b) => a - b);
  let next = 0;
  for (const member of byIdentity) {
    let missing = missingOf.get(member)!;
    while (missing > 0 && next < pool.length) {
      target[pool[next++]!] = member;
      missing -= 1;
    }
  }
  return target;
}

/** Code-unit order, the same on every member and platform (not locale-dependent). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
