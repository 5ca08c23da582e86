/**
 * 1. API requests in steady state: 3 replicas of each implementation, each on its own Lease,
 * running at the same time on one API server with the same timings; requests per role counted
 * from the audit log over the same window.
 */
import type { Implementation } from '@nest-leader/test/support/candidate-process.js';
import type { ClusterInfo } from '@nest-leader/test/support/control-plane.js';
import { uniqueLeaseName } from '@nest-leader/test/support/cluster.js';
import { monotonicNowMs } from '@nest-leader/test/support/monotonic-time.js';
import type { LeaderElectionTimings } from 'nest-leader';
import { countByVerb, readLeaseRequests, requestsInWindow } from '../support/audit-log.js';
import { sleep } from '../support/sleep.js';
import { Fleet } from './fleet.js';

/** Requests of one candidate in the window. */
export interface CandidateLoad {
  identity: string;
  user: string;
  role: 'leader' | 'follower';
  /** Requests per minute, per verb. */
  verbsPerMinute: Record<string, number>;
  perMinute: number;
}

export interface ImplementationLoad {
  implementation: Implementation;
  leaseName: string;
  leader: string;
  /** Terms that began inside the window (0 for a steady state). */
  leadershipChanges: number;
  candidates: CandidateLoad[];
  leaderPerMinute: number;
  /** Mean over the followers. */
  followerPerMinute: number;
  totalPerMinute: number;
  /** Responses that were not 2xx, per HTTP code. */
  nonSuccess: Record<string, number>;
}

export interface ApiLoadResult {
  timings: LeaderElectionTimings;
  windowSeconds: number;
  implementations: ImplementationLoad[];
  /** nest-leader's total / client-go's total. */
  totalRatio: number;
}

const USERS = ['alice', 'bob', 'carol'] as const;

export async function measureApiLoad(
  cluster: ClusterInfo,
  timings: LeaderElectionTimings,
  windowSeconds: number,
  implementations: readonly Implementation[],
): Promise<ApiLoadResult> {
  const fleets = implementations.map(
    (implementation) =>
      new Fleet(cluster, {
        implementation,
        leaseName: uniqueLeaseName(`cmp-load-${implementation}`),
        timings,
        users: USERS,
      }),
  );
  const retryMs = timings.retryPeriodSeconds * 1000;
  try {
    await Promise.all(fleets.map((fleet) => fleet.start()));
    const leaders = await Promise.all(fleets.map((fleet) => fleet.waitForLeader(60_000)));
    await Promise.all(fleets.map((f, i) => f.waitUntilAllFollow(leaders[i]!.identity, 30_000)));
    await sleep(2 * retryMs + 1000);
    const windowStartMs = monotonicNowMs();
    const windowStart = new Date();
    console.log(`  steady state, ${windowSeconds} s window…`);
    await sleep(windowSeconds * 1000);
    const windowEnd = new Date();
    const windowMinutes = (+windowEnd - +windowStart) / 60_000;
    await Promise.all(fleets.map((fleet) => fleet.stop()));

    const requests = readLeaseRequests(cluster.auditLogPath!);
    const loads = fleets.map((fleet, i) => {
      const leader = leaders[i]!;
      const inWindow = requestsInWindow(requests, fleet.leaseName, windowStart, windowEnd);
      const candidates: CandidateLoad[] = fleet.all.map((process) => {
        const user = fleet.userOf(process) ?? 'unknown';
        const mine = inWindow.filter((r) => r.username === cluster.identities[user]?.username);
        const verbsPerMinute = Object.fromEntries(
          Object.entries(countByVerb(mine)).map(([verb, n]) => [verb, round1(n / windowMinutes)]),
        );
        return {
          identity: process.identity,
          user,
          role: process === leader.process ? 'leader' : 'follower',
          verbsPerMinute,
          perMinute: round1(mine.length / windowMinutes),
        };
      });
      const followers = candidates.filter((c) => c.role === 'follower');
      const nonSuccess: Record<string, number> = {};
      for (const r of inWindow) {
        if (r.code !== 0 && (r.code < 200 || r.code > 299)) {
          nonSuccess[r.code] = (nonSuccess[r.code] ?? 0) + 1;
        }
      }
      return {
        implementation: fleet.implementation,
        leaseName: fleet.leaseName,
        leader: leader.identity,
        leadershipChanges: fleet.all
          .flatMap((p) => p.events)
          .filter((e) => e.event === 'started' && e.monotonicMs > windowStartMs).length,
        candidates,
        leaderPerMinute: candidates.find((c) => c.role === 'leader')?.perMinute ?? 0,
        followerPerMinute: round1(
          followers.reduce((sum, c) => sum + c.perMinute, 0) / Math.max(1, followers.length),
        ),
        totalPerMinute: round1(inWindow.length / windowMinutes),
        nonSuccess,
      };
    });
    const total = (impl: Implementation) =>
      loads.find((l) => l.implementation === impl)?.totalPerMinute ?? NaN;
    return {
      timings,
      windowSeconds: Math.round(windowMinutes * 600) / 10,
      implementations: loads,
      totalRatio: Math.round((total('nest-leader') / total('client-go')) * 1000) / 1000,
    };
  } finally {
    await Promise.all(fleets.map((fleet) => fleet.dispose()));
  }
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
