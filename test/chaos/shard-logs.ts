/**
 * The members of a sharded election print one `units` line per tick (every shard whose term
 * passed its call-time check, with its token) and `started`/`stopped` per shard term; this turns
 * them into one election's logs PER SHARD, in the default election's shapes, so the one invariant
 * checker judges each shard as it judges one election: a shard term is a term, its token the
 * fencing token, a units line naming the shard a work line. Each run of units lines of one
 * (member, shard, token) becomes its first and last line — all the checker's rules read (a term's
 * span, its last work, work after its end) — so a long run stays small. Pure.
 */
import type { DemoEvent } from '@nest-leader/demo/demo-events';
import type { CandidateEvent } from '../support/candidate-process.js';
import type { ProcessExit, ProcessLog } from './invariant-checker.js';

/** One member process as the sharded harness saw it. */
export interface MemberLog {
  /** Unique per process. */
  instance: string;
  identity: string;
  /** The member's row: its slot in the election. */
  slot: number;
  events: readonly CandidateEvent[];
  /** Wall-clock ms. */
  spawnedAt: number;
  stoppingAt?: number;
  exit?: ProcessExit;
}

/** Wall-clock ms of a CLOCK_MONOTONIC stamp: `offsetMs` = Date.now() − monotonic, once per run. */
const wall = (monotonicMs: number, offsetMs: number) =>
  new Date(monotonicMs + offsetMs).toISOString();

/**
 * Per shard (0 … shards − 1), every member's log of that shard as the default election's events.
 * `offsetMs` maps the members' CLOCK_MONOTONIC stamps to wall-clock ms (one offset for all).
 */
export function shardLogs(
  members: readonly MemberLog[],
  shards: number,
  offsetMs: number,
): ProcessLog[][] {
  const perShard: ProcessLog[][] = Array.from({ length: shards }, () => []);
  for (const member of members) {
    const timed = Array.from({ length: shards }, () => [] as { ms: number; event: DemoEvent }[]);
    // The first and last units line of each (shard, token), in the member's own order.
    const runs = new Map<
      string,
      { shard: number; token: number; firstMs: number; lastMs: number }
    >();
    const identity = member.identity;
    for (const e of member.events) {
      if ((e.event === 'started' || e.event === 'stopped') && e.shard !== undefined) {
        if (e.shard >= shards) continue;
        timed[e.shard]!.push({
          ms: e.monotonicMs,
          event: {
            event: e.event === 'started' ? 'leadership-acquired' : 'leadership-lost',
            identity,
            leaseTransitions: e.token!,
            ...(e.live !== undefined && { live: e.live }),
            at: wall(e.monotonicMs, offsetMs),
          },
        });
      } else if (e.event === 'units') {
        e.shards!.forEach((shard, i) => {
          if (shard >= shards) return;
          const token = e.tokens![i]!;
          const key = `${shard}/${token}`;
          const run = runs.get(key);
          if (run) run.lastMs = e.monotonicMs;
          else runs.set(key, { shard, token, firstMs: e.monotonicMs, lastMs: e.monotonicMs });
        });
      }
    }
    for (const run of runs.values()) {
      for (const ms of run.firstMs === run.lastMs ? [run.firstMs] : [run.firstMs, run.lastMs]) {
        timed[run.shard]!.push({
          ms,
          event: {
            event: 'leader-work',
            task: 'reconcile',
            identity,
            leaseTransitions: run.token,
            at: wall(ms, offsetMs),
          },
        });
      }
    }
    timed.forEach((list, shard) => {
      if (list.length === 0) return;
      // Stable: a started line before a units line of the same stamp, as printed.
      list.sort((a, b) => a.ms - b.ms);
      perShard[shard]!.push({
        instance: member.instance,
        identity,
        slot: member.slot,
        events: list.map((t) => t.event),
        spawnedAt: member.spawnedAt,
        ...(member.stoppingAt !== undefined && { stoppingAt: member.stoppingAt }),
        ...(member.exit && { exit: member.exit }),
      });
    });
  }
  return perShard;
}
