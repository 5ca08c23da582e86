/**
 * `pnpm bench shards`: a sharded election on the real kube-apiserver with real member
 * processes (the candidate harness's `sharded` program), at the library's default timings.
 *
 * - Load: requests/min by verb from the audit log, 8 members, for 1,024 shards, 16 and 4,096
 *   (one after another, each alone on the API server during its window), and — in the same run —
 *   one-Lease-per-shard elections (8 candidates each, watching, in this process), measured for
 *   a few Leases and scaled to 1,024 (the load of independent elections adds up).
 * - Moves: 8 → 9 members (a join) and 9 → 8 (SIGTERM), 1,024 shards: shards moved, shards
 *   interrupted that did not move, and per moved shard the time without an owner (the old
 *   owner's `stopped` to the new owner's `started`, CLOCK_MONOTONIC).
 * - Crash: SIGKILL of a member that does not coordinate: per shard of it, from its last
 *   renewal (the audit log's last update of its member Lease) to the new owner's `started`.
 * - Memory of a member with 1,024 shards (the coordinator marked) and of a one-election candidate
 *   process of the same age, each after a full GC (`CandidateProcess.memory()`): RSS and V8 heap
 *   in use. A single RSS reading without a GC measured when V8 last collected, not what the
 *   process holds (identical members differed by up to 30 MB).
 */
import {
  type CandidateProcess,
  CandidateProcess as Candidates,
  leaseTarget,
} from '@nest-leader/test/support/candidate-process.js';
import { uniqueLeaseName } from '@nest-leader/test/support/cluster.js';
import type { ClusterInfo } from '@nest-leader/test/support/control-plane.js';
import { monotonicNowMs } from '@nest-leader/test/support/monotonic-time.js';
import { grantLeaseAccess } from '@nest-leader/test/support/rbac.js';
import {
  balanced,
  latestUnits,
  SHARDED_VERBS,
  startShardedMember,
} from '@nest-leader/test/support/sharded-members.js';
import {
  type LeaderElectionTimings,
  LeaderElector,
  LeaseLock,
  memberLeaseName,
} from 'nest-leader/core';
import { countByVerb, readLeaseRequests } from './support/audit-log.js';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { withControlPlane } from './support/control-plane.js';
import { writeResults } from './support/results.js';
import { sleep } from './support/sleep.js';
import { describeMs, type MsDistribution } from './support/stats.js';

const USERS = ['alice', 'bob', 'carol'] as const;
/** The one-election candidate's user: not in USERS, so the load windows do not count it. */
const ONE_USER = 'dave';
const MEMBERS = 8;
const TIMINGS: LeaderElectionTimings = {
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
};
/** One-Lease-per-shard elections measured, scaled to 1,024. */
const REFERENCE_LEASES = 16;

interface Load {
  shards: number;
  windowSeconds: number;
  perMinute: Record<string, number>;
  totalPerMinute: number;
}

interface ShardsResult {
  load: Load[];
  reference: Load & { measuredLeases: number; scaledTo: number };
  join: { moved: number; interruptedNotMoved: number; unowned: MsDistribution };
  leave: {
    moved: number;
    leaverOwned: number;
    interruptedNotMoved: number;
    unowned: MsDistribution;
  };
  crash: { shards: number; afterLastRenewal: MsDistribution; leaseDurationMs: number };
  rss: {
    /** How the figures were taken. */
    measuredAfter: string;
    memberWith1024ShardsMb: number[];
    /** Index in `memberWith1024ShardsMb` of the member that coordinated. */
    coordinatorIndex: number;
    memberHeapUsedMb: number[];
    oneElectionMb: number;
    oneElectionHeapUsedMb: number;
  };
}

export const shardsBench: Benchmark = {
  name: 'shards',
  description:
    'sharded election: requests/min by verb (1,024/16/4,096 shards over 8 members vs one Lease per shard), moves 8→9→8, gaps, crash, RSS',
  settings: ['seconds'],
  inDefaultRun: false,
  async run(settings: BenchSettings, command: string): Promise<void> {
    const result = await withControlPlane(USERS, async (cluster) => {
      for (const user of USERS) await grantLeaseAccess(cluster, user, SHARDED_VERBS);
      await grantLeaseAccess(cluster, ONE_USER);
      return measure(cluster, settings.seconds);
    });
    const summary = summarize(result);
    const path = writeResults({
      benchmark: 'shards',
      measures:
        'requests/min by verb of a sharded election (audit log) against one Lease per shard; ' +
        'moves, unowned time per moved shard, crash re-own time, RSS',
      command,
      parameters: {
        members: MEMBERS,
        timings: TIMINGS,
        windowSeconds: settings.seconds,
        referenceLeases: REFERENCE_LEASES,
      },
      results: result,
      summary,
    });
    console.log(summary.join('\n'));
    console.log(`  → ${path}`);
  },
};

async function measure(cluster: ClusterInfo, seconds: number): Promise<ShardsResult> {
  const load: Load[] = [];
  let moves: Pick<ShardsResult, 'join' | 'leave' | 'crash' | 'rss'> | undefined;
  for (const shards of [1024, 16, 4096]) {
    const fleet: CandidateProcess[] = [];
    const leaseName = uniqueLeaseName(`bench-shards-${shards}`);
    try {
      // One at a time: eight Node processes starting at once on a small machine take long.
      const members: CandidateProcess[] = [];
      for (let i = 0; i < MEMBERS; i++) {
        const user = USERS[i % USERS.length]!;
        members.push(
          await startShardedMember(cluster, user, leaseName, `m${i}`, shards, TIMINGS, fleet),
        );
      }
      // A one-election candidate of the members' age, for the memory comparison; as ONE_USER,
      // whose requests the load windows do not count.
      const one = shards === 1024 ? await oneElection(cluster, fleet) : undefined;
      await balanced(members, shards, monotonicNowMs(), 120_000);
      console.log(`  ${shards} shards balanced over ${MEMBERS}; measuring ${seconds} s…`);
      await sleep(3000);
      load.push(await window(cluster, shards, seconds));
      if (one) moves = await movesAndCrash(cluster, leaseName, members, one, fleet);
    } finally {
      for (const member of fleet) member.kill('SIGTERM');
      await Promise.all(fleet.map((m) => Promise.race([m.exited, sleep(20_000)])));
      await Promise.all(fleet.map((m) => m.dispose()));
    }
  }
  const reference = await perShardReference(cluster, seconds);
  return { load, reference, ...moves! };
}

async function window(cluster: ClusterInfo, shards: number, seconds: number): Promise<Load> {
  const from = new Date();
  await sleep(seconds * 1000);
  const to = new Date();
  const usernames = new Set(USERS.map((u) => cluster.identities[u]!.username));
  const requests = readLeaseRequests(cluster.auditLogPath!).filter(
    (r) => usernames.has(r.username) && r.receivedAt >= from && r.receivedAt < to,
  );
  const minutes = (+to - +from) / 60_000;
  const perMinute = Object.fromEntries(
    Object.entries(countByVerb(requests)).map(([verb, n]) => [verb, round1(n / minutes)]),
  );
  return {
    shards,
    windowSeconds: Math.round(minutes * 60),
    perMinute,
    totalPerMinute: round1(requests.length / minutes),
  };
}

async function movesAndCrash(
  cluster: ClusterInfo,
  leaseName: string,
  members: CandidateProcess[],
  one: CandidateProcess,
  fleet: CandidateProcess[],
): Promise<Pick<ShardsResult, 'join' | 'leave' | 'crash' | 'rss'>> {
  const shards = 1024;
  const rss = await memoryOf(members, one);

  // 8 → 9.
  const joinMs = monotonicNowMs();
  const joiner = await startShardedMember(
    cluster,
    USERS[MEMBERS % 3]!,
    leaseName,
    `m${MEMBERS}`,
    shards,
    TIMINGS,
    fleet,
  );
  await balanced([...members, joiner], shards, joinMs, 120_000);
  await sleep(1000);
  const join = movesSince(members, [joiner], joinMs);

  // 9 → 8: the joiner leaves with SIGTERM.
  const leaverOwned = joiner.events.filter((e) => e.event === 'started').length;
  const leaveMs = joiner.kill('SIGTERM');
  await joiner.exited;
  await balanced(members, shards, leaveMs, 120_000);
  await sleep(1000);
  const leave = { ...movesSince([joiner], members, leaveMs), leaverOwned };

  // Crash: SIGKILL a member that does not coordinate.
  const coordinating = (m: CandidateProcess) =>
    m.events.some(
      (e) => e.event === 'log' && e.message?.startsWith('Coordinating sharded election'),
    );
  const victim = members.find((m) => !coordinating(m))!;
  const ownedByVictim = latestShards(victim);
  const killWallMs = Date.now();
  const killMs = victim.kill('SIGKILL');
  const rest = members.filter((m) => m !== victim);
  await balanced(rest, shards, killMs, 120_000);
  // Its own renewals: the updates of its member Lease received before the kill (the
  // coordinator's eviction, after it, is an update of that Lease too).
  const renewals = readLeaseRequests(cluster.auditLogPath!).filter(
    (r) =>
      r.leaseName === memberLeaseName(leaseName, victim.identity) &&
      r.verb === 'update' &&
      r.code === 200 &&
      +r.receivedAt <= killWallMs,
  );
  const lastRenewalWallMs = +renewals.at(-1)!.receivedAt;
  const reowned: number[] = [];
  for (const shard of ownedByVictim) {
    const started = rest
      .flatMap((m) => m.events)
      .find((e) => e.event === 'started' && e.shard === shard && e.monotonicMs > killMs);
    if (started) reowned.push(Date.parse(started.time) - lastRenewalWallMs);
  }
  return {
    join: {
      moved: join.moved,
      interruptedNotMoved: join.interruptedNotMoved,
      unowned: describeMs(join.gaps),
    },
    leave: {
      moved: leave.moved,
      leaverOwned,
      interruptedNotMoved: leave.interruptedNotMoved,
      unowned: describeMs(leave.gaps),
    },
    crash: {
      shards: ownedByVictim.length,
      afterLastRenewal: describeMs(reowned),
      leaseDurationMs: TIMINGS.leaseDurationSeconds * 1000,
    },
    rss,
  };
}

/** Shards that moved from `from` to `to` after `sinceMs`, their unowned time, and interruptions of others. */
function movesSince(from: CandidateProcess[], to: CandidateProcess[], sinceMs: number) {
  const stoppedAt = new Map<number, number>();
  for (const event of from.flatMap((m) => m.events)) {
    if (event.event === 'stopped' && event.monotonicMs > sinceMs)
      stoppedAt.set(event.shard!, event.monotonicMs);
  }
  const gaps: number[] = [];
  let moved = 0;
  for (const event of to.flatMap((m) => m.events)) {
    if (event.event !== 'started' || event.monotonicMs <= sinceMs) continue;
    moved += 1;
    const stopped = stoppedAt.get(event.shard!);
    if (stopped !== undefined) gaps.push(event.monotonicMs - stopped);
  }
  const startedShards = new Set(
    to
      .flatMap((m) => m.events)
      .filter((e) => e.event === 'started' && e.monotonicMs > sinceMs)
      .map((e) => e.shard),
  );
  const interruptedNotMoved = [...stoppedAt.keys()].filter((s) => !startedShards.has(s)).length;
  return { moved, gaps, interruptedNotMoved };
}

function latestShards(member: CandidateProcess): number[] {
  return member.events.findLast((e) => e.event === 'units')?.shards ?? [];
}

const mb = (bytes: number) => round1(bytes / 2 ** 20);

/** A one-election candidate (our elector on its own Lease) as {@link ONE_USER}. */
function oneElection(cluster: ClusterInfo, fleet: CandidateProcess[]): Promise<CandidateProcess> {
  return Candidates.startReady(
    {
      implementation: 'nest-leader',
      identity: 'rss-one',
      timings: TIMINGS,
      ...leaseTarget(cluster, ONE_USER, uniqueLeaseName('bench-shards-one')),
    },
    fleet,
  );
}

/** Every member's and the one-election candidate's memory after a full GC, one at a time. */
async function memoryOf(
  members: readonly CandidateProcess[],
  one: CandidateProcess,
): Promise<ShardsResult['rss']> {
  const memberMemory = [];
  for (const member of members) memberMemory.push(await member.memory());
  const oneMemory = await one.memory();
  const coordinatorIndex = members.findIndex((m) => latestUnits(m, -Infinity)?.coordinator);
  return {
    measuredAfter: 'a full GC in each process (SIGUSR2, CandidateProcess.memory()), all of one age',
    memberWith1024ShardsMb: memberMemory.map((m) => mb(m.rssBytes)),
    coordinatorIndex,
    memberHeapUsedMb: memberMemory.map((m) => mb(m.heapUsedBytes)),
    oneElectionMb: mb(oneMemory.rssBytes),
    oneElectionHeapUsedMb: mb(oneMemory.heapUsedBytes),
  };
}

/** `REFERENCE_LEASES` one-Lease-per-shard elections of 8 candidates each, scaled to 1,024. */
async function perShardReference(
  cluster: ClusterInfo,
  seconds: number,
): Promise<ShardsResult['reference']> {
  const electors: LeaderElector[] = [];
  for (let lease = 0; lease < REFERENCE_LEASES; lease++) {
    const name = uniqueLeaseName(`bench-shard-ref-${lease}`);
    for (let i = 0; i < MEMBERS; i++) {
      const user = USERS[i % USERS.length]!;
      electors.push(
        new LeaderElector({
          lock: new LeaseLock({
            kubeConfig: cluster.identities[user]!.kubeconfigPath,
            name,
            namespace: cluster.namespace,
          }),
          identity: `m${i}`,
          ...TIMINGS,
          logger: {
            debug: () => undefined,
            info: () => undefined,
            warn: () => undefined,
            error: () => undefined,
          },
        }),
      );
    }
  }
  try {
    for (const elector of electors) elector.start();
    await sleep(TIMINGS.retryPeriodSeconds * 3000);
    console.log(
      `  ${REFERENCE_LEASES} one-Lease-per-shard elections × ${MEMBERS}; measuring ${seconds} s…`,
    );
    const measured = await window(cluster, REFERENCE_LEASES, seconds);
    const scale = 1024 / REFERENCE_LEASES;
    return {
      ...measured,
      measuredLeases: REFERENCE_LEASES,
      scaledTo: 1024,
      perMinute: Object.fromEntries(
        Object.entries(measured.perMinute).map(([v, n]) => [v, round1(n * scale)]),
      ),
      totalPerMinute: round1(measured.totalPerMinute * scale),
    };
  } finally {
    await Promise.all(electors.map((e) => e.stop()));
  }
}

function summarize(r: ShardsResult): string[] {
  const verbs = (perMinute: Record<string, number>) =>
    Object.entries(perMinute)
      .map(([v, n]) => `${v} ${n}`)
      .join(', ');
  const dist = (d: MsDistribution) =>
    `median ${d.medianMs} ms, p99 ${d.p99Ms} ms, max ${d.maxMs} ms (n=${d.n})`;
  return [
    `shards — ${MEMBERS} members, leaseDuration ${TIMINGS.leaseDurationSeconds} s, renewDeadline ${TIMINGS.renewDeadlineSeconds} s, retryPeriod ${TIMINGS.retryPeriodSeconds} s`,
    ...r.load.map(
      (l) =>
        `  ${String(l.shards).padStart(5)} shards: ${l.totalPerMinute}/min (${verbs(l.perMinute)})`,
    ),
    `  one Lease per shard (${r.reference.measuredLeases} measured, ×${r.reference.scaledTo / r.reference.measuredLeases}): ${r.reference.totalPerMinute}/min (${verbs(r.reference.perMinute)})`,
    `  8 → 9: ${r.join.moved} moved, ${r.join.interruptedNotMoved} interrupted without moving; unowned ${dist(r.join.unowned)}`,
    `  9 → 8: ${r.leave.moved} moved (the leaver owned ${r.leave.leaverOwned}), ${r.leave.interruptedNotMoved} interrupted without moving; unowned ${dist(r.leave.unowned)}`,
    `  crash: ${r.crash.shards} shards owned again after the last renewal: ${dist(r.crash.afterLastRenewal)} (leaseDuration ${r.crash.leaseDurationMs} ms)`,
    `  memory after a full GC: members with 1,024 shards RSS ${r.rss.memberWith1024ShardsMb.join(', ')} MB ` +
      `(coordinator: #${r.rss.coordinatorIndex + 1}), heap used ${r.rss.memberHeapUsedMb.join(', ')} MB; ` +
      `one election RSS ${r.rss.oneElectionMb} MB, heap used ${r.rss.oneElectionHeapUsedMb} MB`,
  ];
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
