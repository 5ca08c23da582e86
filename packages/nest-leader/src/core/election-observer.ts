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

/**
 * Why a term began — the reason of the leadership change, as this candidate saw the Lease it
 * took: `handoff` — the previous leader handed it to this candidate
 * (`LeaderElector.transferLeadership(to)`); `preferred` — handed to it as the preferred candidate
 * (`transferLeadership()` without a target, the handoff on stop: `LeaseHandoff.preferred`); `release` — the previous holder had
 * released it (empty holderIdentity); `expired` — the previous holder's record expired by this
 * candidate's observation (a crashed or paused leader, a lost renewal, a handoff target that did
 * not take it); `created` — the Lease did not exist and this candidate created it.
 */
export type LeadershipChangeReason = 'handoff' | 'preferred' | 'release' | 'expired' | 'created';

/** Fields every observation carries. */
export interface ElectionObservation {
  /** The election's name (the elector's `name` option). */
  election: string;
  /** This candidate's identity. */
  identity: string;
}

/** What the elector reports. Implement the methods you need; see {@link noopElectionObserver}. */
export interface ElectionObserver {
  /** This candidate began a term (client-go's `leaderOn`); `reason`: how it got the Lease. */
  termStarted?(
    event: ElectionObservation & { term: LeaderTerm; reason: LeadershipChangeReason },
  ): void;
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
