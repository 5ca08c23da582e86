/**
 * Members of a sharded election as candidate processes (`program: 'sharded'`), judged from their
 * own events: who works on which shard now, balance, and the spans of work per shard for the
 * one overlap checker. Shared by the integration test and `pnpm bench shards`.
 */
import assert from 'node:assert/strict';
import type { LeaderElectionTimings } from 'nest-leader';
import {
  CandidateProcess,
  type CandidateEvent,
  type KubernetesLockTarget,
  leaseTarget,
} from './candidate-process.js';
import type { ClusterInfo } from './control-plane.js';
import { eventually } from './eventually.js';

/** RBAC verbs of a sharded election's members on `leases`. */
export const SHARDED_VERBS = ['get', 'create', 'update', 'watch', 'list'] as const;

/**
 * Starts member `identity` of the sharded election `leaseName`, authenticated as `user`
 * (`extraArgs`: e.g. `--fenced-dir`, `--pause-file`; see `sharded-candidate.ts`).
 */
export function startShardedMember(
  cluster: ClusterInfo,
  user: string,
  leaseName: string,
  identity: string,
  shards: number,
  timings: LeaderElectionTimings,
  fleet?: CandidateProcess[],
  extraArgs: readonly string[] = [],
): Promise<CandidateProcess> {
  return startShardedMemberAt(
    leaseTarget(cluster, user, leaseName),
    identity,
    shards,
    timings,
    fleet,
    extraArgs,
  );
}

/**
 * {@link startShardedMember} with the Lease target given whole: e.g. a kubeconfig whose server
 * is a toxiproxy link in front of the API server (the chaos harness's sharded mode).
 */
export function startShardedMemberAt(
  target: KubernetesLockTarget,
  identity: string,
  shards: number,
  timings: LeaderElectionTimings,
  fleet?: CandidateProcess[],
  extraArgs: readonly string[] = [],
): Promise<CandidateProcess> {
  return CandidateProcess.startReady(
    {
      implementation: 'nest-leader',
      program: 'sharded',
      identity,
      timings,
      extraArgs: ['--shards', String(shards), ...extraArgs],
      ...target,
    },
    fleet,
  );
}

/** The latest `units` line of `member` after `sinceMs`: the shards it worked on then. */
export function latestUnits(member: CandidateProcess, sinceMs: number): CandidateEvent | undefined {
  for (let i = member.events.length - 1; i >= 0; i--) {
    const event = member.events[i]!;
    if (event.monotonicMs <= sinceMs) return undefined;
    if (event.event === 'units') return event;
  }
  return undefined;
}

/**
 * Resolves when every one of `shards` is worked on by exactly one of `members` and each works on
 * ⌊N/R⌋ or ⌈N/R⌉ shards (by their units after `sinceMs`); returns the CLOCK_MONOTONIC time of
 * the latest units line that showed it.
 */
export function balanced(
  members: readonly CandidateProcess[],
  shards: number,
  sinceMs: number,
  timeoutMs: number,
): Promise<number> {
  return eventually(
    () => {
      const floor = Math.floor(shards / members.length);
      const owners = new Map<number, string>();
      let latestMs = -Infinity;
      for (const member of members) {
        const units = latestUnits(member, sinceMs);
        assert.ok(units, `${member.identity}: no units yet`);
        const count = units.shards!.length;
        assert.ok(
          count === floor || count === floor + 1,
          `${member.identity} works on ${count} shards`,
        );
        for (const shard of units.shards!) {
          assert.ok(
            !owners.has(shard),
            `shard ${shard}: ${owners.get(shard)} and ${member.identity}`,
          );
          owners.set(shard, member.identity);
        }
        latestMs = Math.max(latestMs, units.monotonicMs);
      }
      assert.equal(owners.size, shards, `${shards - owners.size} shards unowned`);
      return latestMs;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

/** A span of work on one shard by one member under one token: [first unit, last unit]. */
export interface ShardWorkSpan {
  shard: number;
  /** `<identity>@<token>`. */
  owner: string;
  token: number;
  startMs: number;
  endMs: number;
}

/** Per shard, the spans of work of each (member, token), from the members' `units` lines. */
export function workSpans(members: readonly CandidateProcess[]): ShardWorkSpan[] {
  const spans = new Map<string, ShardWorkSpan>();
  for (const member of members) {
    for (const event of member.events) {
      if (event.event !== 'units') continue;
      event.shards!.forEach((shard, i) => {
        const token = event.tokens![i]!;
        const key = `${shard}/${member.identity}/${token}`;
        const span = spans.get(key);
        if (span) span.endMs = event.monotonicMs;
        else {
          const owner = `${member.identity}@${token}`;
          const at = event.monotonicMs;
          spans.set(key, { shard, owner, token, startMs: at, endMs: at });
        }
      });
    }
  }
  return [...spans.values()];
}
