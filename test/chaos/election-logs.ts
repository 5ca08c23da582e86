/**
 * The demo runs a second, named election (the shard reconciler's, on its own Lease) in every
 * replica. Its events have their own shapes (`shard-leadership`, `shard-work`); this turns one
 * named election's events into the default election's shapes, so the same invariant checker
 * can judge it. Pure.
 */
import type { DemoEvent } from '@nest-leader/demo/demo-events';
import type { ProcessLog } from './invariant-checker.js';

/** One event of the named election `election` in the default election's shape (none else). */
function asDefaultElection(event: DemoEvent, election: string): DemoEvent[] {
  if (event.event === 'shard-leadership' && event.election === election) {
    return [
      {
        event: event.state === 'acquired' ? 'leadership-acquired' : 'leadership-lost',
        identity: event.identity,
        leaseTransitions: event.leaseTransitions,
        at: event.at,
      },
    ];
  }
  if (event.event === 'shard-work' && event.election === election) {
    return [
      {
        event: 'leader-work',
        task: 'reconcile',
        identity: event.identity,
        leaseTransitions: event.leaseTransitions,
        at: event.at,
      },
    ];
  }
  return [];
}

/** The processes' logs of the named election `election`, as if it were the default one. */
export function namedElectionLogs(
  processes: readonly ProcessLog[],
  election: string,
): ProcessLog[] {
  return processes.map((p) => ({
    ...p,
    events: p.events.flatMap((event) => asDefaultElection(event, election)),
    receivedAt: undefined,
  }));
}
