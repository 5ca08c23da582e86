/** The local demo's end report: the overlap checks of the election's and the shards' work, the metrics, the failovers. */
import { checkLeaderTerms, checkShardTerms } from '../demo-events.js';
import { SHARDED_ELECTION } from '../demo.constants.js';
import type { ReplicaMetrics } from './metrics-scrape.js';
import type { FailoverMeasurement, ReplicaFleet } from './replica-fleet.js';
import type { ReplicaProcess } from './replica-process.js';
import { say } from './demo-say.js';

/** Median and max of a list of milliseconds, as seconds. */
export function summarize(values: readonly number[]): string {
  if (values.length === 0) return 'none';
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return `n=${sorted.length} median ${(median / 1000).toFixed(2)} s, max ${(sorted.at(-1)! / 1000).toFixed(2)} s`;
}

/**
 * The end summary of the scraped metrics: per replica process and election, what its last scrape
 * said; then, for the default election, whether the leader changes each replica counted agree
 * with the Lease (from the first acquisition's leaseTransitions to the last one's), and whether
 * the terms the replicas counted agree with the acquisitions in their event logs.
 */
export function metricsSummary(
  fleet: ReplicaFleet,
  scrapes: Map<ReplicaProcess, ReplicaMetrics>,
  initialReplicas: number,
  initialTransitions: number | undefined,
): string[] {
  const lines = ['metrics, from each replica’s last scrape of GET /metrics:'];
  for (const replica of fleet.history) {
    const metrics = scrapes.get(replica);
    if (!metrics) continue;
    const elections = [...metrics]
      .map(
        ([name, m]) =>
          `${name}: leader ${m.masterStatus}, terms started ${m.termsStarted}, leader changes ` +
          `seen ${m.transitions}, lock errors ${m.lockErrors}, @LeaderOnly ran ${m.leaderOnlyRan}` +
          ` skipped ${m.leaderOnlySkipped}`,
      )
      .join(' · ');
    lines.push(`  ${replica.identity} (pid ${replica.pid}): ${elections}`);
  }
  const acquired = fleet
    .events()
    .filter((e) => e.event.event === 'leadership-acquired')
    .map((e) => (e.event as { leaseTransitions: number }).leaseTransitions);
  if (acquired.length > 0) {
    // Each replica counts the changes after its first sighting of the Lease: from the value it
    // had before the run, or from the first acquisition when this run created it.
    const from = initialTransitions ?? acquired[0]!;
    const changes = acquired.at(-1)! - from;
    const whole = fleet.history
      .slice(0, initialReplicas)
      .filter((r) => r.running || r.exitStatus?.code === 0);
    const seen = whole.map((r) => ({
      identity: r.identity,
      transitions: scrapes.get(r)?.get('default')?.transitions,
    }));
    const agree = seen.every((s) => s.transitions === changes);
    lines.push(
      `  default: the Lease changed leader ${changes} times (leaseTransitions ${from} → ` +
        `${acquired.at(-1)}); replicas up the whole run saw ${seen.map((s) => `${s.identity} ${s.transitions ?? '?'}`).join(', ')}` +
        (agree ? ' — agree' : ' — differ (a follower may not have polled the last change yet)'),
    );
    const termsCounted = [...scrapes.values()].reduce(
      (sum, m) => sum + (m.get('default')?.termsStarted ?? 0),
      0,
    );
    lines.push(
      `  default: terms started, all replicas' metrics: ${termsCounted}; acquisitions in their ` +
        `event logs: ${acquired.length}${termsCounted === acquired.length ? ' — agree' : ''}`,
    );
  }
  return lines;
}

/**
 * Prints the end report.
 * @returns whether the replicas' work logs show no violation (two replicas in one term, or
 * overlapping terms) in either election.
 */
export function reportRun(
  fleet: ReplicaFleet,
  scrapes: Map<ReplicaProcess, ReplicaMetrics>,
  initialReplicas: number,
  initialTransitions: number | undefined,
  failovers: readonly FailoverMeasurement[] | undefined,
): boolean {
  let safe = true;
  const work = fleet.leaderWork();
  const { terms, violations } = checkLeaderTerms(work);
  say(
    `${terms.length} terms, ${work.length} leader-work lines, ` +
      (violations.length === 0
        ? 'no two replicas worked in overlapping terms'
        : `VIOLATIONS:\n  ${violations.join('\n  ')}`),
  );
  if (violations.length > 0) safe = false;
  const shardWork = fleet.shardWork();
  if (shardWork.length > 0) {
    const shards = checkShardTerms(shardWork);
    const tokens = [...shards.terms.values()].reduce((sum, t) => sum + t.length, 0);
    say(
      `${SHARDED_ELECTION}: ${shards.terms.size} shards, ${tokens} shard terms, ` +
        `${shardWork.length} shard-work lines, ` +
        (shards.violations.length === 0
          ? 'no shard worked by two replicas in overlapping terms, tokens increasing per shard'
          : `VIOLATIONS:\n  ${shards.violations.join('\n  ')}`),
    );
    if (shards.violations.length > 0) safe = false;
  } else {
    say(`${SHARDED_ELECTION}: no shard-work lines (sharding is off without a Kubernetes Lease)`);
  }
  if (scrapes.size > 0) {
    for (const line of metricsSummary(fleet, scrapes, initialReplicas, initialTransitions)) {
      say(line);
    }
  }
  if (failovers) {
    say(
      `failover after SIGKILL: new leader ${summarize(failovers.map((f) => f.acquiredMs))}; ` +
        `first leader-work ${summarize(failovers.map((f) => f.firstWorkMs))}`,
    );
  }
  return safe;
}
