/**
 * How the elector classifies and reports failed lock requests: races are normal, API outages
 * are logged rate-limited, configuration problems (RBAC) loudly, and a 403 on a verb that
 * worked before gets a grace period. Framework-free.
 */

import { KubernetesApiError, LockConflictError } from '../../errors.js';
import type { LockOperation } from '../../locks/resource-lock.js';
import { electionMessages } from '../election.messages.js';
import type { Clock } from '../clock.js';
import type { LockRequestOutcome } from '../election-observer.js';
import type { ElectionLogger } from '../leader-elector.options.js';
import { RateLimitedLogger } from '../rate-limited-logger.js';

/**
 * How long 403s are tolerated (logged as a warning, without the RBAC hint) when the same
 * credentials worked before: a restarted kube-apiserver answers 403 for a few seconds (2–5 s
 * measured) while its RBAC informer cache syncs.
 * @internal
 */
export const ACCESS_DENIED_GRACE_MS = 10_000;

/**
 * True for a request on a record that no longer exists (HTTP 404, e.g. on PUT).
 * @internal
 */
export function isNotFound(error: unknown): boolean {
  return error instanceof KubernetesApiError && error.kind === 'not-found';
}

/**
 * How a failed lock request ended, for the observer: `'conflict'` for any lock's
 * `LockConflictError`, the Kubernetes error kind, `'aborted'` when `parent` (the run or the
 * term) was aborted, `'timeout'` when only `request` (the per-request timeout) was, else
 * `'unknown'`.
 * @internal
 */
export function lockRequestOutcome(
  error: unknown,
  request: AbortSignal,
  parent: AbortSignal,
): LockRequestOutcome {
  if (error instanceof LockConflictError) return 'conflict';
  if (error instanceof KubernetesApiError) return error.kind;
  if (parent.aborted) return 'aborted';
  if (request.aborted) return 'timeout';
  return 'unknown';
}

/**
 * Logs one elector's failed lock requests at the level they deserve: conflicts are normal
 * races (debug); configuration problems (a non-transient `KubernetesApiError`: RBAC, a bad
 * name) are errors; everything else a warning; repeats rate-limited (`RateLimitedLogger`).
 * A 403 on a verb that worked before with these credentials is a warning for
 * {@link ACCESS_DENIED_GRACE_MS} (a restarted API server's RBAC cache), then an error with the
 * RBAC hint; a 403 on a verb that never worked is an error at once.
 * @internal
 */
export class LockFailureReporter {
  private readonly repeats: RateLimitedLogger;
  /** Lock verbs that succeeded with these credentials: a later 403 on one may be a cache sync. */
  private readonly workedOperations = new Set<LockOperation>();
  /** Per verb, when the current run of 403s began, if one is going on. */
  private readonly deniedSinceMs = new Map<LockOperation, number>();

  /**
   * @param lock - the lock's description, for messages
   * @param logger - where failures are logged
   * @param clock - monotonic time for the grace period and the rate limit
   */
  constructor(
    private readonly lock: string,
    private readonly logger: ElectionLogger,
    private readonly clock: Clock,
  ) {
    this.repeats = new RateLimitedLogger(logger, clock);
  }

  /** A request with `operation` succeeded: it works with these credentials; any 403 run ended. */
  succeeded(operation: LockOperation): void {
    this.workedOperations.add(operation);
    this.deniedSinceMs.delete(operation);
  }

  /**
   * Reports a failed request. Nothing is logged when `signal` (the term or the run, not the
   * request timeout) was aborted: the failure is the stop's, not the lock's.
   */
  failed(operation: LockOperation, error: unknown, signal: AbortSignal): void {
    if (signal.aborted) return;
    const message = electionMessages.lockOperationFailed(operation, this.lock, error);
    if (error instanceof LockConflictError) {
      this.logger.debug(message);
      return;
    }
    const kind =
      error instanceof KubernetesApiError
        ? error.kind
        : error instanceof Error
          ? error.name
          : 'unknown';
    if (kind === 'forbidden' && this.workedOperations.has(operation)) {
      const nowMs = this.clock.nowMs();
      const sinceMs = this.deniedSinceMs.get(operation) ?? nowMs;
      this.deniedSinceMs.set(operation, sinceMs);
      if (nowMs - sinceMs < ACCESS_DENIED_GRACE_MS) {
        const grace = electionMessages.accessDeniedAfterSuccess(
          operation,
          this.lock,
          ACCESS_DENIED_GRACE_MS,
        );
        this.repeats.report(`${operation}:${kind}:grace`, 'warn', grace);
        return;
      }
    }
    const configurationProblem = error instanceof KubernetesApiError && !error.transient;
    this.repeats.report(`${operation}:${kind}`, configurationProblem ? 'error' : 'warn', message);
  }

  /** An attempt got an answer: ends every failure streak, logging the recovery once if any. */
  recovered(): void {
    this.repeats.recovered(this.lock);
  }
}
