/** `pnpm demo --chaos S`: the leader SIGKILLed every S seconds, the failover measured. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DemoCliOptions } from './demo-cli.js';
import type { FailoverMeasurement, ReplicaFleet } from './replica-fleet.js';
import { say } from './demo-say.js';

/** Every `chaosSeconds`: SIGKILL the leader, measure the failover, restart the killed replica. */
export async function runChaos(
  fleet: ReplicaFleet,
  options: DemoCliOptions,
  failovers: FailoverMeasurement[],
  stopping: AbortSignal,
): Promise<void> {
  const timeoutMs = (options.leaseDurationSeconds + 5 * options.retryPeriodSeconds + 10) * 1000;
  while (!stopping.aborted) {
    try {
      await sleep(options.chaosSeconds! * 1000, undefined, { signal: stopping });
    } catch {
      return; // stopping
    }
    const leader = fleet.leader();
    if (!leader) {
      say('chaos: no leader right now, skipping this round');
      continue;
    }
    const index = fleet.replicas.indexOf(leader.replica);
    say(`chaos: SIGKILL ${leader.replica.identity} (the leader, pid ${leader.replica.pid})`);
    try {
      const failover = await fleet.failover('SIGKILL', timeoutMs);
      failovers.push(failover);
      say(
        `chaos: failover ${failover.from} → ${failover.to} in ${(failover.acquiredMs / 1000).toFixed(2)} s ` +
          `(first leader-work after ${(failover.firstWorkMs / 1000).toFixed(2)} s), leaseTransitions ` +
          `${failover.previousLeaseTransitions} → ${failover.leaseTransitions}`,
      );
    } catch (error) {
      if (stopping.aborted) return;
      say(`chaos: ${(error as Error).message}`);
    }
    if (stopping.aborted) return;
    const restarted = await fleet.restart(index);
    say(`chaos: restarted ${restarted.identity} (pid ${restarted.pid}) as a follower`);
  }
}
