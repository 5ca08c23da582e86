/**
 * The demo's sharded election (`orders`, 16 shards) in real pods, judged from what the cluster
 * shows: the assignment Lease the coordinator writes, and the pods' own `shard-ownership` and
 * `shard-work` lines. Safety is the demo's one overlap check per shard (`checkShardTerms`); gaps
 * are the demo's `longestWorkGap` per shard. The cluster tier's cases call these around their
 * own disruptions (a deleted leader pod, a rollout).
 */
import assert from 'node:assert/strict';
import type { V1Lease } from '@kubernetes/client-node';
import {
  checkShardTerms,
  longestWorkGap,
  type ShardOwnershipChangeEvent,
  type ShardWorkEvent,
} from '@nest-leader/demo/demo-events';
import { ORDER_SHARDS, SHARDED_ELECTION } from '@nest-leader/demo/demo.constants';
import { assignmentLeaseName, parseShardAssignment, SHARDS_ANNOTATION } from 'nest-leader/core';
import type { DemoDeployment } from './demo-deployment.js';
import { eventually } from './eventually.js';
import type { PodLogCollector } from './pod-log-collector.js';

/** What a settled election looks like. */
export interface SettledShards {
  /** Shards per live pod, by the assignment (every pod listed, 0 included). */
  perPod: Record<string, number>;
  /** The assignment's revision when it was found settled. */
  revision: number;
  /** How long it took to settle, ms (from the call). */
  settleMs: number;
}

/** The pods' shard lines, as the collector kept them. */
function shardLines(logs: PodLogCollector) {
  const events = logs.json<{ event: string; election?: string }>();
  const work = events.filter(
    (e): e is ShardWorkEvent & { pod: string } =>
      e.event === 'shard-work' && e.election === SHARDED_ELECTION,
  );
  const ownership = events.filter(
    (e): e is ShardOwnershipChangeEvent & { pod: string } =>
      e.event === 'shard-ownership' && e.election === SHARDED_ELECTION,
  );
  return { work, ownership };
}

/**
 * Which pods claim each shard by their own lines now: a pod claims a shard while its last
 * `shard-ownership` line for it says `started`, in its current container (a restarted
 * container starts with nothing: its `replica-started` line clears the earlier claims).
 */
function claimsFromLogs(logs: PodLogCollector, livePods: ReadonlySet<string>): string[][] {
  const lines = logs
    .json<{ event: string; election?: string; at: string }>()
    .filter(
      (e) =>
        e.event === 'replica-started' ||
        (e.event === 'shard-ownership' && e.election === SHARDED_ELECTION),
    )
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  const owned = new Map<string, Set<number>>();
  for (const line of lines) {
    if (line.event === 'replica-started') {
      owned.set(line.pod, new Set());
      continue;
    }
    const change = line as unknown as ShardOwnershipChangeEvent & { pod: string };
    let shards = owned.get(change.pod);
    if (!shards) owned.set(change.pod, (shards = new Set()));
    if (change.state === 'started') shards.add(change.shard);
    else shards.delete(change.shard);
  }
  const claims: string[][] = Array.from({ length: ORDER_SHARDS }, () => []);
  for (const [pod, shards] of owned) {
    if (!livePods.has(pod)) continue;
    for (const shard of shards) claims[shard]!.push(pod);
  }
  return claims;
}

/**
 * Waits until the election is settled over the live pods: the assignment (`<leaseName>-shards`,
 * read as `kubectl get lease` would) grants every shard, revokes none, names live pods only, and
 * gives each live pod ⌊16/R⌋ or ⌈16/R⌉ shards; and each pod's own lines agree (each shard
 * claimed by its owner in the assignment and by no other live pod).
 * @param leaseName - the sharded election's Lease (`SHARD_LEASE_NAME`, default `<LEASE_NAME>-orders`)
 * @throws AssertionError (from `eventually`) if it does not settle within `timeoutMs`
 */
export async function waitForSettledShards(
  demo: DemoDeployment,
  logs: PodLogCollector,
  leaseName: string,
  timeoutMs: number,
): Promise<SettledShards> {
  const started = performance.now();
  return eventually(
    async () => {
      const live = (await demo.pods())
        .filter((p) => !p.terminating && p.containerId)
        .map((p) => p.name);
      const lease = await demo.cluster.getJson<V1Lease>(
        'get',
        'lease',
        assignmentLeaseName(leaseName),
        '-n',
        demo.namespace,
      );
      const assignment = parseShardAssignment(
        lease.metadata?.annotations?.[SHARDS_ANNOTATION],
        ORDER_SHARDS,
      );
      assert.ok(assignment, 'the assignment is readable');
      const perPod: Record<string, number> = Object.fromEntries(live.map((pod) => [pod, 0]));
      assignment.shards.forEach((grant, shard) => {
        assert.ok(grant.owner, `shard ${shard} is owned`);
        assert.equal(grant.revokedAt, undefined, `shard ${shard} is not being moved`);
        assert.ok(live.includes(grant.owner.identity), `shard ${shard}'s owner is a live pod`);
        perPod[grant.owner.identity]! += 1;
      });
      const low = Math.floor(ORDER_SHARDS / live.length);
      const high = Math.ceil(ORDER_SHARDS / live.length);
      for (const [pod, count] of Object.entries(perPod)) {
        assert.ok(count === low || count === high, `${pod} owns ${count} (${low} or ${high})`);
      }
      const claims = claimsFromLogs(logs, new Set(live));
      claims.forEach((pods, shard) =>
        assert.deepEqual(
          pods,
          [assignment.shards[shard]!.owner!.identity],
          `shard ${shard}: claimed by its owner alone, by the pods' own lines`,
        ),
      );
      return {
        perPod,
        revision: assignment.revision,
        settleMs: Math.round(performance.now() - started),
      };
    },
    { timeoutMs, intervalMs: 500 },
  );
}

/** The shards' figures over a window of a run. */
export interface ShardWindowFigures {
  /** The longest time any shard went without `shard-work` in the window, ms, and which. */
  longestGapMs: number;
  longestGapShard: number;
  /** Shard terms started in the window on another pod than the shard's previous owner. */
  moves: number;
  /** Violations of "never two owners" over the whole run, per shard (`checkShardTerms`). */
  overlaps: string[];
  /** Shards whose terms did not start with strictly increasing tokens, over the whole run. */
  tokenViolations: string[];
  /** shard-work lines in the window. */
  workLines: number;
}

/**
 * Judges the shards from the pods' lines: per shard, the longest gap in `shard-work` from
 * `fromMs` to `toMs` (wall clock, one node: one clock), the moves in the window, and over the
 * whole run the overlap check and the token order of each shard's term starts.
 */
export function judgeShards(
  logs: PodLogCollector,
  fromMs: number,
  toMs: number,
): ShardWindowFigures {
  const { work, ownership } = shardLines(logs);
  let longestGapMs = 0;
  let longestGapShard = -1;
  for (let shard = 0; shard < ORDER_SHARDS; shard++) {
    const gap = longestWorkGap(
      work.filter((w) => w.shard === shard),
      fromMs,
      toMs,
    );
    if (gap.gapMs > longestGapMs) {
      longestGapMs = gap.gapMs;
      longestGapShard = shard;
    }
  }
  const starts = ownership
    .filter((o) => o.state === 'started')
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  let moves = 0;
  const tokenViolations: string[] = [];
  const previous = new Map<number, { pod: string; token: number }>();
  for (const start of starts) {
    const before = previous.get(start.shard);
    const at = Date.parse(start.at);
    if (before && before.pod !== start.pod && at >= fromMs && at <= toMs) moves += 1;
    if (before && start.token <= before.token) {
      tokenViolations.push(
        `shard ${start.shard}: token ${start.token} on ${start.pod} at ${start.at} after ${before.token} on ${before.pod}`,
      );
    }
    previous.set(start.shard, { pod: start.pod, token: start.token });
  }
  return {
    longestGapMs,
    longestGapShard,
    moves,
    overlaps: checkShardTerms(work).violations,
    tokenViolations,
    workLines: work.filter((w) => {
      const at = Date.parse(w.at);
      return at >= fromMs && at <= toMs;
    }).length,
  };
}

/** Asserts the safety half of {@link judgeShards}: 0 overlaps, tokens increasing per shard. */
export function assertShardSafety(figures: ShardWindowFigures): void {
  assert.deepEqual(figures.overlaps, [], 'no shard worked by two pods in overlapping terms');
  assert.deepEqual(figures.tokenViolations, [], 'tokens strictly increase per shard');
}
