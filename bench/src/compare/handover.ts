/**
 * 2. Graceful handover (SIGTERM, release) and 3. crash failover (SIGKILL): 3 candidate processes
 * per implementation, each implementation on its own Lease, same timings; the leader is killed
 * and we time from the kill to another candidate's `started` (CLOCK_MONOTONIC on both sides).
 *
 * Graceful rounds alternate between the implementations (and the timings), one handover at a
 * time, with the order flipped every round. Crash rounds kill both implementations' leaders at
 * the same moment: a crash handover is mostly waiting for the Lease to expire, and running them
 * side by side keeps the two under the same load while halving the time.
 */
import type { Implementation } from '@nest-leader/test/support/candidate-process.js';
import type { ClusterInfo } from '@nest-leader/test/support/control-plane.js';
import { uniqueLeaseName } from '@nest-leader/test/support/cluster.js';
import type { LeaderElectionTimings } from 'nest-leader';
import { sleep } from '../support/sleep.js';
import { describeMs, type MsDistribution } from '../support/stats.js';
import { Fleet, SHORT_NAME, type Handover } from './fleet.js';

export interface HandoverSeries {
  implementation: Implementation;
  timings: LeaderElectionTimings;
  signal: Handover['signal'];
  /** Kill → next `started`, ms. */
  handover: MsDistribution;
  /** Crash only: handover − leaseDuration, ms. */
  pastLeaseDuration?: MsDistribution;
  /** Terms that overlapped by the candidates' own events (must be 0). */
  overlappingTerms: number;
  rounds: Handover[];
}

const USERS = ['alice', 'bob', 'carol'] as const;

function timingsLabel(t: LeaderElectionTimings): string {
  return `${t.leaseDurationSeconds}/${t.renewDeadlineSeconds}/${t.retryPeriodSeconds}`;
}

function makeFleet(
  cluster: ClusterInfo,
  implementation: Implementation,
  timings: LeaderElectionTimings,
  kind: string,
): Fleet {
  const label = timingsLabel(timings).replaceAll('/', '-');
  return new Fleet(cluster, {
    implementation,
    leaseName: uniqueLeaseName(`cmp-${kind}-${SHORT_NAME[implementation]}-${label}`),
    timings,
    users: USERS,
  });
}

/** Lets every follower see the current leader, then waits `baseMs` + U[0, retryPeriod). */
async function settle(fleet: Fleet, timings: LeaderElectionTimings, baseMs: number) {
  const retryMs = timings.retryPeriodSeconds * 1000;
  await fleet.ready();
  const leader = await fleet.waitForLeader(60_000);
  await fleet.waitUntilAllFollow(leader.identity, 60_000);
  await sleep(baseMs + Math.random() * retryMs);
}

function timeoutFor(timings: LeaderElectionTimings): number {
  return (2 * timings.leaseDurationSeconds + 5 * timings.retryPeriodSeconds) * 1000 + 10_000;
}

/** Graceful handovers, interleaved over implementations × timings, `rounds` of each. */
export async function measureGracefulHandovers(
  cluster: ClusterInfo,
  timingsList: readonly LeaderElectionTimings[],
  implementations: readonly Implementation[],
  rounds: number,
): Promise<HandoverSeries[]> {
  const fleets = timingsList.flatMap((timings) =>
    implementations.map((impl) => ({ timings, fleet: makeFleet(cluster, impl, timings, 'grace') })),
  );
  const measured = new Map<Fleet, Handover[]>(fleets.map(({ fleet }) => [fleet, []]));
  try {
    await Promise.all(fleets.map(({ fleet }) => fleet.start()));
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 0 ? [...fleets].reverse() : fleets;
      const line: string[] = [];
      for (const { timings, fleet } of order) {
        await settle(fleet, timings, 500);
        const handover = await fleet.handOver('SIGTERM', timeoutFor(timings));
        measured.get(fleet)!.push(handover);
        line.push(`${SHORT_NAME[fleet.implementation]}@${timingsLabel(timings)} ${handover.ms} ms`);
      }
      console.log(`  graceful ${round}/${rounds}: ${line.join(', ')}`);
    }
    await Promise.all(fleets.map(({ fleet }) => fleet.stop()));
    return fleets.map(({ timings, fleet }) => ({
      implementation: fleet.implementation,
      timings,
      signal: 'SIGTERM',
      handover: describeMs(measured.get(fleet)!.map((h) => h.ms)),
      overlappingTerms: fleet.overlappingTerms(),
      rounds: measured.get(fleet)!,
    }));
  } finally {
    await Promise.all(fleets.map(({ fleet }) => fleet.dispose()));
  }
}

/** Crash failovers: every round SIGKILLs all implementations' leaders together. */
export async function measureCrashFailovers(
  cluster: ClusterInfo,
  timings: LeaderElectionTimings,
  implementations: readonly Implementation[],
  rounds: number,
): Promise<HandoverSeries[]> {
  const fleets = implementations.map((impl) => makeFleet(cluster, impl, timings, 'crash'));
  const measured = new Map<Fleet, Handover[]>(fleets.map((fleet) => [fleet, []]));
  const leaseMs = timings.leaseDurationSeconds * 1000;
  const retryMs = timings.retryPeriodSeconds * 1000;
  try {
    await Promise.all(fleets.map((fleet) => fleet.start()));
    for (let round = 1; round <= rounds; round++) {
      await Promise.all(fleets.map((fleet) => settle(fleet, timings, 0)));
      // One random phase for all: the crash falls anywhere in the leaders' renew cycles.
      await sleep(retryMs + Math.random() * retryMs);
      const handovers = await Promise.all(
        fleets.map((fleet) => fleet.handOver('SIGKILL', timeoutFor(timings))),
      );
      fleets.forEach((fleet, i) => measured.get(fleet)!.push(handovers[i]!));
      const line = handovers.map(
        (h, i) =>
          `${SHORT_NAME[fleets[i]!.implementation]} ${h.ms} ms (${h.ms - leaseMs >= 0 ? '+' : ''}${Math.round(h.ms - leaseMs)})`,
      );
      console.log(`  crash ${round}/${rounds}: ${line.join(', ')}`);
    }
    await Promise.all(fleets.map((fleet) => fleet.stop()));
    return fleets.map((fleet) => {
      const values = measured.get(fleet)!.map((h) => h.ms);
      return {
        implementation: fleet.implementation,
        timings,
        signal: 'SIGKILL',
        handover: describeMs(values),
        pastLeaseDuration: describeMs(values.map((ms) => ms - leaseMs)),
        overlappingTerms: fleet.overlappingTerms(),
        rounds: measured.get(fleet)!,
      };
    });
  } finally {
    await Promise.all(fleets.map((fleet) => fleet.dispose()));
  }
}
