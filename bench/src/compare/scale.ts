/**
 * 4. Scale: N candidates of one implementation on one Lease (one process running N electors,
 * each with its own client), one implementation at a time so the API server's CPU is theirs
 * alone. Requests per follower from the audit log; CPU from /proc.
 *
 * All N candidates authenticate as one user, so the audit log cannot tell them apart: the
 * leader's requests are its renewals (`update`), and everything else in a window without a
 * leadership change is the followers' (a follower never writes unless it takes over).
 */
import type { Implementation } from '@nest-leader/test/support/candidate-process.js';
import type { ClusterInfo } from '@nest-leader/test/support/control-plane.js';
import { uniqueLeaseName } from '@nest-leader/test/support/cluster.js';
import { monotonicNowMs } from '@nest-leader/test/support/monotonic-time.js';
import type { LeaderElectionTimings } from 'nest-leader';
import { countByVerb, readLeaseRequests, requestsInWindow } from '../support/audit-log.js';
import { processTreeCpuSeconds } from '../support/process-cpu.js';
import { sleep } from '../support/sleep.js';
import { Fleet, SHORT_NAME } from './fleet.js';

export interface ScalePoint {
  implementation: Implementation;
  candidates: number;
  windowSeconds: number;
  leadershipChanges: number;
  /** The leader's updates per minute. */
  leaderUpdatesPerMinute: number;
  /** Requests per minute per follower (all requests but the leader's updates / (N − 1)). */
  perFollowerPerMinute: number;
  /** The same, per verb. */
  perFollowerVerbsPerMinute: Record<string, number>;
  /** API server (+ etcd) CPU over the window, % of one core. */
  apiServerCpuPercent: number;
  /** The candidates' process CPU over the window, % of one core. */
  candidatesCpuPercent: number;
}

const USER = 'dave';

export async function measureScale(
  cluster: ClusterInfo,
  apiServerPid: number,
  timings: LeaderElectionTimings,
  sizes: readonly number[],
  implementations: readonly Implementation[],
  windowSeconds: number,
): Promise<ScalePoint[]> {
  const points: ScalePoint[] = [];
  for (const [i, size] of sizes.entries()) {
    const order = i % 2 === 0 ? implementations : [...implementations].reverse();
    for (const implementation of order) {
      points.push(
        await measurePoint(cluster, apiServerPid, timings, size, implementation, windowSeconds),
      );
      const p = points.at(-1)!;
      console.log(
        `  scale ${SHORT_NAME[implementation]} × ${size}: ${p.perFollowerPerMinute} req/min per follower, ` +
          `API server CPU ${p.apiServerCpuPercent} %, candidates' CPU ${p.candidatesCpuPercent} %`,
      );
    }
  }
  return points;
}

async function measurePoint(
  cluster: ClusterInfo,
  apiServerPid: number,
  timings: LeaderElectionTimings,
  size: number,
  implementation: Implementation,
  windowSeconds: number,
): Promise<ScalePoint> {
  const fleet = new Fleet(cluster, {
    implementation,
    leaseName: uniqueLeaseName(`cmp-scale-${SHORT_NAME[implementation]}-${size}`),
    timings,
    users: [USER],
    candidatesPerProcess: size,
  });
  try {
    await fleet.start();
    const leader = await fleet.waitForLeader(60_000);
    await fleet.waitUntilAllFollow(leader.identity, 60_000);
    await sleep(2 * timings.retryPeriodSeconds * 1000 + 1000);
    const candidatesPid = fleet.processes[0]!.pid!;
    const windowStartMs = monotonicNowMs();
    const windowStart = new Date();
    const apiCpu0 = processTreeCpuSeconds(apiServerPid);
    const candidatesCpu0 = processTreeCpuSeconds(candidatesPid);
    await sleep(windowSeconds * 1000);
    const apiCpu1 = processTreeCpuSeconds(apiServerPid);
    const candidatesCpu1 = processTreeCpuSeconds(candidatesPid);
    const windowEnd = new Date();
    const seconds = (+windowEnd - +windowStart) / 1000;
    await fleet.stop();

    const inWindow = requestsInWindow(
      readLeaseRequests(cluster.auditLogPath!),
      fleet.leaseName,
      windowStart,
      windowEnd,
    );
    const verbs = countByVerb(inWindow);
    const leaderUpdates = verbs.update ?? 0;
    const followerVerbs = { ...verbs };
    delete followerVerbs.update;
    const perFollower = (n: number) => round1(n / (size - 1) / (seconds / 60));
    return {
      implementation,
      candidates: size,
      windowSeconds: round1(seconds),
      leadershipChanges: fleet.all
        .flatMap((p) => p.events)
        .filter((e) => e.event === 'started' && e.monotonicMs > windowStartMs).length,
      leaderUpdatesPerMinute: round1(leaderUpdates / (seconds / 60)),
      perFollowerPerMinute: perFollower(inWindow.length - leaderUpdates),
      perFollowerVerbsPerMinute: Object.fromEntries(
        Object.entries(followerVerbs).map(([verb, n]) => [verb, perFollower(n)]),
      ),
      apiServerCpuPercent: round1(((apiCpu1 - apiCpu0) / seconds) * 100),
      candidatesCpuPercent: round1(((candidatesCpu1 - candidatesCpu0) / seconds) * 100),
    };
  } finally {
    await fleet.dispose();
  }
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
