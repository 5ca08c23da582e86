/**
 * The demo runs a sharded election (`orders`, 16 shards) in every replica beside the default
 * election. Its events have their own shapes (`shard-ownership`, `shard-work`); this turns one
 * shard's events into the default election's shapes (the shard's token as the term), so the same
 * invariant checker can judge each shard as one election. Pure.
 */
import type { DemoEvent } from '@nest-leader/demo/demo-events';
import type { ProcessLog } from './invariant-checker.js';

/** One event of `shard` of the sharded election `election` in the default election's shape. */
function asDefaultElection(event: DemoEvent, election: string, shard: number): DemoEvent[] {
  if (event.event === 'shard-ownership' && event.election === election && event.shard === shard) {
    return [
      {
        event: event.state === 'started' ? 'leadership-acquired' : 'leadership-lost',
        identity: event.identity,
        leaseTransitions: event.token,
        ...(event.live !== undefined && { live: event.live }),
        at: event.at,
      },
    ];
  }
  if (event.event === 'shard-work' && event.election === election && event.shard === shard) {
    return [
      {
        event: 'leader-work',
        task: 'reconcile',
        identity: event.identity,
        leaseTransitions: event.token,
        at: event.at,
      },
    ];
  }
  return [];
}

/** The shards of `election` that appear in the processes' logs, ascending. */
export function shardsInLogs(processes: readonly ProcessLog[], election: string): number[] {
  const shards = new Set<number>();
  for (const p of processes) {
    for (const event of p.events) {
      if (
        (event.event === 'shard-work' || event.event === 'shard-ownership') &&
        event.election === election
      ) {
        shards.add(event.shard);
      }
    }
  }
  return [...shards].sort((a, b) => a - b);
}

/** The processes' logs of one shard of the sharded election `election`, as if it were the default one. */
export function shardElectionLogs(
  processes: readonly ProcessLog[],
  election: string,
  shard: number,
): ProcessLog[] {
  return processes.map((p) => ({
    ...p,
    events: p.events.flatMap((event) => asDefaultElection(event, election, shard)),
    receivedAt: undefined,
  }));
}
