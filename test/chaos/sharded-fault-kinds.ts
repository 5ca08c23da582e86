/**
 * The fault catalogue of the chaos harness's sharded mode (`pnpm chaos --sharded`): the faults
 * that make sense per member of one sharded election, and the longest time a shard may stay
 * without an owner after each, derived from the election timings. Pure data and arithmetic.
 */
import { type BoundAllowances, type ChaosTimings, RETRY_JITTER } from './fault-kinds.js';

/** Every fault (and the recovery step after some) of the sharded mode. */
export const SHARD_FAULT_KINDS = [
  'member-sigkill',
  'member-sigterm',
  'member-sigstop',
  'member-partition',
  'member-reset',
  'scale-up',
  'scale-down',
  'api-stall',
  'replace',
  'wake',
] as const;

export type ShardFaultKind = (typeof SHARD_FAULT_KINDS)[number];

/** The kinds the schedule draws from: `replace` and `wake` follow some of them, never drawn. */
export const DRAWN_SHARD_FAULT_KINDS = [
  'member-sigkill',
  'member-sigterm',
  'member-sigstop',
  'member-partition',
  'member-reset',
  'scale-up',
  'scale-down',
  'api-stall',
] as const satisfies readonly ShardFaultKind[];

/** The rounds the issue counts as kill/stop rounds. */
export const KILL_STOP_KINDS: readonly ShardFaultKind[] = ['member-sigkill', 'member-sigstop'];

/**
 * Extra copies per bag of the schedule: the long run needs ≥ 1,000 kill/stop rounds, so a bag of
 * 14 rounds holds 3 SIGKILLs and 5 SIGSTOPs (8 kill/stop rounds) and every other kind once —
 * more SIGSTOPs, which wake the same process, than SIGKILLs, each of which starts a new one.
 */
export const SHARD_BAG_EXTRAS: Partial<Record<ShardFaultKind, number>> = {
  'member-sigkill': 2,
  'member-sigstop': 4,
};

/** Fewest and most members of one sharded election during a run. */
export const MIN_MEMBERS = 2;
export const MAX_MEMBERS = 5;

/** One kind's description, for the report and the README. */
export interface ShardFaultSpec {
  action: string;
  /** The bound of a shard's time without an owner, over L, D, R, J, H (units period), S, Δ. */
  boundFormula: string;
  reasoning: string;
}

const CRASH_REASONING =
  'the coordinator watches the member Leases, so it saw the last renewal at once; it evicts a Lease it saw unchanged for leaseDuration, then writes the assignment; when the coordinator itself was hit, another member takes the election Lease at most J·R after it expired and has watched the member Leases all along: one more J·R';
const GRACEFUL_REASONING =
  'a graceful move: revoke written, the old owner aborts and acknowledges (or releases its Lease on SIGTERM), the grant is written — a few writes and watch deliveries; a coordinator that left releases the election Lease, taken at the next attempt (J·R)';

export const SHARD_FAULT_SPECS: Record<ShardFaultKind, ShardFaultSpec> = {
  'member-sigkill': {
    action:
      'SIGKILL a member (the coordinator in about a third of the rounds), then a new member replaces it',
    boundFormula: 'L + 2·J·R + H + S',
    reasoning: CRASH_REASONING,
  },
  'member-sigstop': {
    action:
      'SIGSTOP a member between its call-time check and its fenced writes until the others own all its shards and wrote each of them, then SIGCONT (its stale-token writes must be refused)',
    boundFormula: 'L + 2·J·R + H + S',
    reasoning: `as a crash: its renewals stop with it; ${CRASH_REASONING}`,
  },
  'member-partition': {
    action:
      "blackhole a member's link (toxiproxy timeout 0, both ways) until the others own all its shards, then heal it",
    boundFormula: 'L + 2·J·R + H + S',
    reasoning:
      'the member stops its shards at renewDeadline by its own clock; the others start them after the crash bound',
  },
  'member-reset': {
    action:
      "reset every connection on a member's link (toxiproxy reset_peer) until the others own all its shards, then heal it",
    boundFormula: 'L + 2·J·R + H + S',
    reasoning: 'as a partition: requests fail at once instead of hanging',
  },
  'member-sigterm': {
    action:
      'SIGTERM a member (it drains, releases its member Lease and exits), then a new member replaces it',
    boundFormula: 'J·R + H + S',
    reasoning: GRACEFUL_REASONING,
  },
  'scale-up': {
    action: 'a new member joins (up to 5)',
    boundFormula: 'J·R + H + S',
    reasoning: GRACEFUL_REASONING,
  },
  'scale-down': {
    action: 'SIGTERM a member without a replacement (down to 2)',
    boundFormula: 'J·R + H + S',
    reasoning: GRACEFUL_REASONING,
  },
  'api-stall': {
    action:
      "blackhole every member's link of the election for L + 0.5 s (the API server answers nobody), then heal them",
    boundFormula: 'Δ + 2·J·R + H + S',
    reasoning:
      'every member ends its epoch at renewDeadline; after the stall (Δ, measured) each takes its Lease again with a new epoch and a coordinator its Lease within J·R, then grants every shard',
  },
  replace: {
    action: 'after a SIGKILL or SIGTERM: a new member joins in its place',
    boundFormula: 'J·R + H + S',
    reasoning: GRACEFUL_REASONING,
  },
  wake: {
    action:
      'after a SIGSTOP or partition: SIGCONT or heal; the member finds its epoch over, takes a new one and rejoins',
    boundFormula: 'J·R + H + S',
    reasoning: `its first check after waking fails; ${GRACEFUL_REASONING}`,
  },
};

/** How long the api-stall lasts, ms: past the lease, so every epoch ends. */
export function apiStallMs(t: ChaosTimings): number {
  return t.leaseDurationMs + 500;
}

/**
 * The longest time a shard may stay without an owner after a fault of `kind`, ms (formulas in
 * {@link SHARD_FAULT_SPECS}; H is the members' units period, the resolution of the work log).
 * @param stallMs - for `api-stall`: the measured stall (Δ)
 */
export function shardGapBoundMs(
  kind: ShardFaultKind | 'startup',
  t: ChaosTimings,
  allowances: BoundAllowances,
  stallMs = apiStallMs(t),
): number {
  const L = t.leaseDurationMs;
  const JR = RETRY_JITTER * t.retryPeriodMs;
  const H = t.heartbeatMs;
  const S = allowances.slackMs;
  switch (kind) {
    case 'startup':
    case 'member-sigkill':
    case 'member-sigstop':
    case 'member-partition':
    case 'member-reset':
      return L + 2 * JR + H + S;
    case 'api-stall':
      return stallMs + 2 * JR + H + S;
    case 'member-sigterm':
    case 'scale-up':
    case 'scale-down':
    case 'replace':
    case 'wake':
      return JR + H + S;
  }
}
