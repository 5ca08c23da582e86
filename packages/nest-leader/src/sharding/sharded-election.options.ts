/**
 * The options of a sharded election, validated once at construction (as the elector's).
 * Framework-free.
 */

import { InvalidLeaderElectionOptionError } from '../errors.js';
import { type Clock, SystemClock } from '../core/clock.js';
import {
  consoleElectionLogger,
  type ElectionLogger,
  type LeaderElectionTimings,
  lockRequestTimeoutMs,
  validateLeaderElectionTimings,
} from '../core/leader-elector.options.js';
import { isCandidateIdentity } from '../locks/peer-bounds.js';
import { isDnsSubdomain } from '../kubernetes/names.js';
import { SHARD_ASSIGNMENT_LIMITS } from './shard-assignment.js';
import type { ShardLeaseStore } from './shard-lease-store.js';
import type { ShardObserver } from './shard-observer.js';
import type { ShardTerm } from './shard-term.js';
import type { ShardTermEndReason } from '../errors.interfaces.js';
import { shardingOptionRules } from './sharding.messages.js';

/** Longest election name: its member Leases are `<name>-m-<8 hex digits>` (253 at most). */
export const MAX_SHARDED_ELECTION_NAME_LENGTH = 253 - '-m-00000000'.length;

/** What the owner of shards hears; errors thrown are logged, never propagated. */
export interface ShardCallbacks {
  /**
   * This member owns `term.shard` from now on (until `term.signal` aborts). Called only for a
   * term live just before the call (the member epoch's renew deadline is checked per shard), but
   * a pause during or after it (SIGSTOP, a long GC) can end the term at any moment: check
   * `term.isLive()` or its signal before each unit of work, as with a leader term.
   */
  onShardStarted?(term: ShardTerm): void;
  /**
   * The shard's term ended; resolve once its work has stopped (the drain). The member
   * acknowledges a revoke only after this resolves, or after `drainTimeoutSeconds`.
   */
  onShardStopped?(term: ShardTerm, reason: ShardTermEndReason): void | Promise<void>;
}

/**
 * Options of `ShardedElection`. Timings as the elector's (`leaseDurationSeconds` 15,
 * `renewDeadlineSeconds` 10, `retryPeriodSeconds` 2 by default, same rules): they apply to the
 * coordinator's election and to every member Lease.
 */
export interface ShardedElectionOptions extends Partial<LeaderElectionTimings> {
  /**
   * The election's name: the coordinator's Lease. The assignment is `<name>-shards`, each
   * member's Lease `<name>-m-<hash of its identity>`. A Lease name of at most 242 characters.
   */
  name: string;
  /** Number of shards, 1 to 4,096. Every member of one election must use the same number. */
  shards: number;
  /** Where the Leases live (`KubernetesShardLeaseStore`, or `MemoryShardLeaseStore` in tests). */
  store: ShardLeaseStore;
  /** This member's unique identity (as the elector's: non-empty, at most 128 characters). */
  identity: string;
  /**
   * How long a revoked shard's work may take to drain before this member acknowledges the revoke
   * anyway (its signal is aborted at once in any case), in seconds. Default renewDeadline.
   */
  drainTimeoutSeconds?: number;
  /** Shard callbacks. */
  callbacks?: ShardCallbacks;
  /** Receives what happens to this member's shards (e.g. `PrometheusShardObserver`). */
  observer?: ShardObserver;
  /** Time source (inject `ManualClock` in tests). Default: the system's monotonic clock. */
  clock?: Clock;
  /** Where log lines go. Default: the console, `[nest-leader]` prefix, no debug. */
  logger?: ElectionLogger;
  /** Random numbers in [0, 1) for the coordinator election's jitter. Default `Math.random`. */
  random?: () => number;
}

/** Options with defaults applied; times in ms. @internal */
export interface ResolvedShardedElectionOptions {
  name: string;
  shards: number;
  store: ShardLeaseStore;
  identity: string;
  timings: LeaderElectionTimings;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Per-request timeout of the member's Lease: {@link lockRequestTimeoutMs}. */
  requestTimeoutMs: number;
  drainTimeoutMs: number;
  callbacks: ShardCallbacks;
  observer: ShardObserver | undefined;
  clock: Clock;
  logger: ElectionLogger;
  random: () => number;
}

/**
 * Applies defaults and checks every option once.
 * @throws InvalidLeaderElectionOptionError naming the option and the rule it breaks.
 */
export function resolveShardedElectionOptions(
  options: ShardedElectionOptions,
): ResolvedShardedElectionOptions {
  const { name, shards, store, identity } = options;
  if (!isDnsSubdomain(name) || name.length > MAX_SHARDED_ELECTION_NAME_LENGTH) {
    throw new InvalidLeaderElectionOptionError(
      'name',
      shardingOptionRules.name(MAX_SHARDED_ELECTION_NAME_LENGTH),
      name,
    );
  }
  if (!Number.isInteger(shards) || shards < 1 || shards > SHARD_ASSIGNMENT_LIMITS.maxShards) {
    throw new InvalidLeaderElectionOptionError(
      'shards',
      shardingOptionRules.shards(SHARD_ASSIGNMENT_LIMITS.maxShards),
      shards,
    );
  }
  if (typeof store?.lease !== 'function' || typeof store.list !== 'function') {
    throw new InvalidLeaderElectionOptionError('store', shardingOptionRules.store, store);
  }
  if (!isCandidateIdentity(identity)) {
    throw new InvalidLeaderElectionOptionError('identity', shardingOptionRules.identity, identity);
  }
  const timings = validateLeaderElectionTimings(options);
  const drainTimeoutSeconds = options.drainTimeoutSeconds ?? timings.renewDeadlineSeconds;
  if (
    typeof drainTimeoutSeconds !== 'number' ||
    !Number.isFinite(drainTimeoutSeconds) ||
    drainTimeoutSeconds <= 0
  ) {
    throw new InvalidLeaderElectionOptionError(
      'drainTimeoutSeconds',
      shardingOptionRules.drainTimeoutSeconds,
      drainTimeoutSeconds,
    );
  }
  return {
    name,
    shards,
    store,
    identity,
    timings,
    leaseDurationMs: timings.leaseDurationSeconds * 1000,
    renewDeadlineMs: timings.renewDeadlineSeconds * 1000,
    retryPeriodMs: timings.retryPeriodSeconds * 1000,
    requestTimeoutMs: lockRequestTimeoutMs(timings.renewDeadlineSeconds),
    drainTimeoutMs: drainTimeoutSeconds * 1000,
    callbacks: options.callbacks ?? {},
    observer: options.observer,
    clock: options.clock ?? new SystemClock(),
    logger: options.logger ?? consoleElectionLogger,
    random: options.random ?? Math.random,
  };
}
