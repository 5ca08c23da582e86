/**
 * Which shard a `@LeaderOnly()` invocation of a sharded election runs for: the shard term of
 * the current invocation, through `AsyncLocalStorage` (as `currentTerm()` for elections).
 */

import { AsyncLocalStorage } from 'node:async_hooks';
import type { ShardTerm } from '../../sharding/shard-term.js';

interface ShardFrame {
  readonly election: string;
  readonly term: ShardTerm;
  readonly outer: ShardFrame | undefined;
}

const storage = new AsyncLocalStorage<ShardFrame>();

/**
 * The shard term the current `@LeaderOnly(election)` invocation runs for (its shard, fencing
 * token, signal), or `undefined` outside one. A leader-only method of a sharded election runs
 * once per owned shard; each run sees its own shard here.
 * @param election - the sharded election's name (as given to `registerElection`)
 */
export function currentShard(election: string): ShardTerm | undefined {
  for (let frame = storage.getStore(); frame; frame = frame.outer) {
    if (frame.election === election) return frame.term;
  }
  return undefined;
}

/** Calls `fn` with `currentShard(election)` returning `term` inside it. @internal */
export function runInShard(
  election: string,
  term: ShardTerm,
  fn: (...args: unknown[]) => unknown,
  thisArg: unknown,
  args: unknown[],
): unknown {
  const outer = storage.getStore();
  return storage.run({ election, term, outer }, () => fn.apply(thisArg, args));
}
