/**
 * The demo's structured log: one JSON object per line on stdout, each with an `event`.
 * Written by the app (`EventLog`), read by the launcher and the end-to-end tests.
 * Framework-free on purpose: the launcher imports it without loading Nest.
 */
import { overlappingSpans } from './leadership-overlaps.js';

/** One execution of leader-only work. */
export interface LeaderWorkEvent {
  event: 'leader-work';
  /**
   * Which work ran: `dispatch-jobs` (@Cron), `reconcile` (@Interval), `dispatch-jobs-http`
   * (POST), `heartbeat` (the term-bound loop of `LEADER_HEARTBEAT_MS`).
   */
  task: LeaderTask;
  /** The replica that ran it (its Lease holderIdentity). */
  identity: string;
  /** `leaseTransitions` of the term it ran in: the fencing token. */
  leaseTransitions: number;
  /** Wall-clock time, ISO 8601 (ms; comparable across processes on one host). */
  at: string;
  /**
   * `dispatch-jobs` lines only: the scheduled slot this run is for (`currentSlot()`), ISO 8601.
   * Earlier than `at` by more than the period for a late run (a new leader catching up).
   */
  slot?: string;
  /**
   * `heartbeat` lines only: the elector's own call-time check (`isLeader()` on this very term)
   * when the line was written. The loop itself trusts the term it holds; `false` here means
   * that check let leader-only work run after the term had ended.
   */
  live?: boolean;
}

/**
 * One run of the sharded order reconciler for one shard: a `@LeaderOnly()` run of the sharded
 * election, inside that shard's term (`currentShard()`).
 */
export interface ShardWorkEvent {
  event: 'shard-work';
  /** The sharded election (`orders`). */
  election: string;
  /** The shard, 0 ≤ shard < 16. */
  shard: number;
  /** The shard term's fencing token (the assignment revision that granted it). */
  token: number;
  /** The member epoch of the replica the grant belongs to (its member Lease's leaseTransitions). */
  memberEpoch: number;
  identity: string;
  at: string;
}

/** A shard term of the sharded election started or ended on this replica. */
export interface ShardOwnershipChangeEvent {
  event: 'shard-ownership';
  election: string;
  state: 'started' | 'stopped';
  shard: number;
  token: number;
  memberEpoch: number;
  /** `stopped` only: `revoked` (moved away), `member-epoch-ended` or `stopped` (shutdown). */
  reason?: string;
  /** `started` only: the term's call-time check after `at` (see `LeadershipAcquiredEvent`). */
  live?: boolean;
  identity: string;
  at: string;
}

/** The sharded election does not run on this replica (the lock is not a Kubernetes Lease). */
export interface ShardingOffEvent {
  event: 'sharding-off';
  election: string;
  identity: string;
  reason: string;
  at: string;
}

/** The replica is listening. */
export interface ReplicaStartedEvent {
  event: 'replica-started';
  identity: string;
  pid: number;
  port: number;
  leaseName: string;
  /** The lock setting (`auto`, `kubernetes`, `file`). */
  lock: string;
  /** Shards of the sharded election `orders`; 0 when sharding is off (not a Lease lock). */
  shards: number;
  at: string;
}

/** This replica started a term. */
export interface LeadershipAcquiredEvent {
  event: 'leadership-acquired';
  identity: string;
  leaseTransitions: number;
  /**
   * The term's call-time check, made after `at` was taken: false when the term had already
   * ended by then (a pause — SIGSTOP, a blocked event loop — between the library's check and
   * this line), so the line proves no moment of the term. Absent: not checked (other programs).
   */
  live?: boolean;
  at: string;
}

/** This replica's term ended (lost, stepped down or released). */
export interface LeadershipLostEvent {
  event: 'leadership-lost';
  identity: string;
  leaseTransitions: number;
  at: string;
}

/** This replica observed a new holder (possibly itself). */
export interface LeaderChangedEvent {
  event: 'leader-changed';
  identity: string;
  leader: string;
  at: string;
}

/** Shutdown began (a signal arrived or the app is closing). */
export interface ShutdownStartedEvent {
  event: 'shutdown-started';
  identity: string;
  signal: string | null;
  at: string;
}

/** Shutdown finished: leader-only work drained, Lease released; the process exits next. */
export interface ReplicaStoppedEvent {
  event: 'replica-stopped';
  identity: string;
  at: string;
}

export type LeaderTask = 'dispatch-jobs' | 'reconcile' | 'dispatch-jobs-http' | 'heartbeat';

export type DemoEvent =
  | LeaderWorkEvent
  | ShardWorkEvent
  | ShardOwnershipChangeEvent
  | ShardingOffEvent
  | ReplicaStartedEvent
  | LeadershipAcquiredEvent
  | LeadershipLostEvent
  | LeaderChangedEvent
  | ShutdownStartedEvent
  | ReplicaStoppedEvent;

/** What GET /leader answers. */
export interface LeaderStatus {
  /** Identity of the current leader as this replica last observed it; null if none yet. */
  name: string | null;
  /** This replica's identity. */
  identity: string;
  isLeader: boolean;
  /** `leaseTransitions` of this replica's term while it leads, else the last one it observed. */
  leaseTransitions: number | null;
  pid: number;
  /** The sharded election `orders` as this replica sees it; null when sharding is off. */
  shards: ShardsStatus | null;
}

/** A sharded election as one replica sees it. */
export interface ShardsStatus {
  election: string;
  /** Number of shards. */
  shards: number;
  /** The shards this replica owns now, ascending. */
  owned: number[];
  /** This replica coordinates the election (writes the assignment). */
  coordinator: boolean;
  /**
   * Shards per member identity, as this replica last read the assignment (owners being moved
   * included): the status board's view.
   */
  perMember: Record<string, number>;
}

/** Parses one stdout line; `undefined` for anything that is not a demo event. */
export function parseDemoEvent(line: string): DemoEvent | undefined {
  const text = line.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && typeof (value as DemoEvent).event === 'string') {
      return value as DemoEvent;
    }
  } catch {
    // Not JSON: ignore (a stray console.log, a partial line from a killed process).
  }
  return undefined;
}

/** The leader-work lines of one term, as found in the logs. */
export interface ObservedTerm {
  leaseTransitions: number;
  identities: string[];
  firstAt: Date;
  lastAt: Date;
  lines: number;
}

/**
 * Checks the safety property in a set of leader-work lines from all replicas: every term
 * (a `leaseTransitions` value) was worked by one identity only, terms do not overlap in time
 * (from first to last line; {@link overlappingSpans}), and ordered by `leaseTransitions`, each
 * term's last line comes before the next term's first line.
 *
 * Times are the replicas' wall clocks, so this is exact only for replicas on one host.
 * @returns the terms found, oldest first, and a description of every violation.
 */
export function checkLeaderTerms(
  work: readonly Pick<LeaderWorkEvent, 'identity' | 'leaseTransitions' | 'at'>[],
): {
  terms: ObservedTerm[];
  violations: string[];
} {
  const byTerm = new Map<number, ObservedTerm>();
  for (const line of work) {
    const at = new Date(line.at);
    const term = byTerm.get(line.leaseTransitions);
    if (!term) {
      byTerm.set(line.leaseTransitions, {
        leaseTransitions: line.leaseTransitions,
        identities: [line.identity],
        firstAt: at,
        lastAt: at,
        lines: 1,
      });
      continue;
    }
    if (!term.identities.includes(line.identity)) term.identities.push(line.identity);
    if (at < term.firstAt) term.firstAt = at;
    if (at > term.lastAt) term.lastAt = at;
    term.lines += 1;
  }
  const terms = [...byTerm.values()].sort((a, b) => a.leaseTransitions - b.leaseTransitions);
  const violations: string[] = [];
  for (const term of terms) {
    if (term.identities.length > 1) {
      violations.push(
        `term ${term.leaseTransitions} was worked by ${term.identities.length} replicas: ${term.identities.join(', ')}`,
      );
    }
  }
  const workedAfter = (earlier: ObservedTerm, later: ObservedTerm) =>
    `term ${earlier.leaseTransitions} (${earlier.identities.join(', ')}) worked until ` +
    `${earlier.lastAt.toISOString()}, after term ${later.leaseTransitions} ` +
    `(${later.identities.join(', ')}) began at ${later.firstAt.toISOString()}`;
  const spanOf = (term: ObservedTerm) => ({
    owner: String(term.leaseTransitions),
    startMs: term.firstAt.getTime(),
    endMs: term.lastAt.getTime(),
  });
  for (const [earlier, later] of overlappingSpans(terms, spanOf, 'apart')) {
    violations.push(workedAfter(earlier, later));
  }
  // Token order: an older term whose work all came after the next term's began (no overlap).
  for (let i = 1; i < terms.length; i++) {
    const previous = terms[i - 1]!;
    const next = terms[i]!;
    if (previous.lastAt > next.firstAt && next.lastAt <= previous.firstAt) {
      violations.push(workedAfter(previous, next));
    }
  }
  return { terms, violations };
}

/** The longest stretch without leader-work in a window (see {@link longestWorkGap}). */
export interface WorkGap {
  /** Its length, ms. */
  gapMs: number;
  /** Where it began: the window's start or a line's time (wall clock, ms since the epoch). */
  fromMs: number;
  /** Where it ended: a line's time or the window's end. */
  toMs: number;
}

/**
 * The longest time without a leader-work line, by any replica, from `windowStartMs` to
 * `windowEndMs` (wall clock, ms since the epoch): the edges of the window count as lines, so
 * a window without any work is one gap as long as the window.
 */
export function longestWorkGap(
  work: readonly Pick<LeaderWorkEvent, 'at'>[],
  windowStartMs: number,
  windowEndMs: number,
): WorkGap {
  const times = work
    .map((line) => new Date(line.at).getTime())
    .filter((ms) => ms >= windowStartMs && ms <= windowEndMs)
    .sort((a, b) => a - b);
  const edges = [windowStartMs, ...times, windowEndMs];
  let longest: WorkGap = { gapMs: 0, fromMs: windowStartMs, toMs: windowStartMs };
  for (let i = 1; i < edges.length; i++) {
    const gapMs = edges[i]! - edges[i - 1]!;
    if (gapMs > longest.gapMs) longest = { gapMs, fromMs: edges[i - 1]!, toMs: edges[i]! };
  }
  return longest;
}

/** The violations of one shard, and its terms. */
export interface ShardTermsReport {
  /** Terms (tokens) seen per shard, oldest first. */
  terms: Map<number, ObservedTerm[]>;
  /** Every violation, prefixed with its shard. */
  violations: string[];
}

/**
 * Checks "never two owners of a shard" in `shard-work` lines from all replicas: for each shard,
 * the check of {@link checkLeaderTerms} with the shard's token as the term (one identity per
 * token, terms not overlapping in time, each token's last line before the next token's first).
 * A shard's tokens strictly increase whoever owns it, so this is the single election's check,
 * per shard. Times are wall clocks: exact only for replicas on one host (or one node).
 */
export function checkShardTerms(
  work: readonly Pick<ShardWorkEvent, 'shard' | 'token' | 'identity' | 'at'>[],
): ShardTermsReport {
  const byShard = new Map<number, { identity: string; leaseTransitions: number; at: string }[]>();
  for (const line of work) {
    let lines = byShard.get(line.shard);
    if (!lines) byShard.set(line.shard, (lines = []));
    lines.push({ identity: line.identity, leaseTransitions: line.token, at: line.at });
  }
  const terms = new Map<number, ObservedTerm[]>();
  const violations: string[] = [];
  for (const shard of [...byShard.keys()].sort((a, b) => a - b)) {
    const checked = checkLeaderTerms(byShard.get(shard)!);
    terms.set(shard, checked.terms);
    violations.push(
      ...checked.violations.map((v) => `shard ${shard}: ${v.replace(/\bterm\b/g, 'token')}`),
    );
  }
  return { terms, violations };
}
