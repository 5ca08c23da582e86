/**
 * The elector's observation seam, modelled on client-go's `leaderelection/metrics.go`
 * (a provider with a do-nothing default): the elector reports what happens to it, and an
 * implementation — Prometheus metrics, Kubernetes Events, pod role labels, a test recorder —
 * decides what to do with it. Framework-free.
 *
 * Every method is optional, is called synchronously on the elector's path and must return
 * quickly; whatever it throws is caught and ignored (an observer never breaks an election).
 * Every event carries `election`: the elector's `name` (client-go's `LeaderElectionConfig.Name`).
 */

import type { KubernetesApiErrorKind, LeaderTermEndReason } from '../errors.js';
import type { LockOperation } from '../locks/resource-lock.js';
import type { LeaderTerm } from './leader-term.js';

/**
 * How one lock request ended: `'success'`; `'not-found'` for a `get` of a missing record;
 * else why it failed — a {@link KubernetesApiErrorKind} (`'conflict'` also for a
 * `LockConflictError` of any lock, `'timeout'` for the elector's per-request timeout),
 * `'aborted'` (the elector stopped or the term ended meanwhile) or `'unknown'`.
 */
export type LockRequestOutcome = 'success' | KubernetesApiErrorKind | 'aborted' | 'unknown';

/** Fields every observation carries. */
export interface ElectionObservation {
  /** The election's name (the elector's `name` option). */
  election: string;
  /** This candidate's identity. */
  identity: string;
}

/** What the elector reports. Implement the methods you need; see {@link noopElectionObserver}. */
export interface ElectionObserver {
  /** This candidate began a term (client-go's `leaderOn`). */
  termStarted?(event: ElectionObservation & { term: LeaderTerm }): void;
  /**
   * This candidate's term ended (client-go's `leaderOff`), before `onStoppedLeading` drains.
   * `durationMs`: from the term's start to its end, on the local monotonic clock.
   */
  termEnded?(
    event: ElectionObservation & {
      term: LeaderTerm;
      reason: LeaderTermEndReason;
      durationMs: number;
    },
  ): void;
  /** A renewal by the leader succeeded (fast or slow path). */
  renewed?(event: ElectionObservation & { term: LeaderTerm }): void;
  /**
   * A renewal fell back from the optimistic update of the cached record to GET + decide
   * (client-go's `slowpathExercised`).
   */
  renewSlowPath?(event: ElectionObservation): void;
  /** One request to the lock finished; `durationMs` on the local monotonic clock. */
  lockRequest?(
    event: ElectionObservation & {
      operation: LockOperation;
      outcome: LockRequestOutcome;
      durationMs: number;
    },
  ): void;
  /**
   * The observed election record changed holder (to another candidate, to this one, or to
   * `''` when released). Fires once per change, on followers and the leader alike.
   */
  leaderObserved?(
    event: ElectionObservation & { holderIdentity: string; leaseTransitions: number },
  ): void;
}

/** The default observer: does nothing. */
export const noopElectionObserver: ElectionObserver = Object.freeze({});
