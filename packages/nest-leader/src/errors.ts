/**
 * Every error class nest-leader throws or reports, in one place, so users can
 * `instanceof`-check them. Messages are built in `messages.ts`.
 *
 * Framework-free: imported by the core (`election/`, `locks/`) and the Nest layer.
 */

import {
  invalidOptionMessage,
  leaderTermEndedMessage,
  lockConflictMessage,
  type LeaseApiErrorDetails,
  leaseApiErrorMessage,
  nestMessages,
} from './messages.js';

/** Base class of every error raised by nest-leader. */
export class LeaderElectionError extends Error {
  override name = 'LeaderElectionError';
}

// ---------------------------------------------------------------------------
// Core (election/, locks/)
// ---------------------------------------------------------------------------

/**
 * An option given to the elector or a lock breaks a rule. Thrown synchronously by
 * constructors and `validate…` functions, once, at configuration time (as client-go's
 * `NewLeaderElector` validates its config).
 */
export class InvalidLeaderElectionOptionError extends LeaderElectionError {
  override name = 'InvalidLeaderElectionOptionError';

  /**
   * @param option - the option's name as the user spelled it, e.g. `renewDeadlineSeconds`
   * @param rule - the rule it breaks, e.g. `must be less than leaseDurationSeconds (15)`
   * @param value - the offending value (shown in the message)
   */
  constructor(
    readonly option: string,
    readonly rule: string,
    readonly value?: unknown,
  ) {
    super(invalidOptionMessage(option, rule, value));
  }
}

/**
 * A compare-and-swap write lost a race: `create` found the record already there, or
 * `update` was given a stale version (HTTP 409 for a Lease). Normal during elections;
 * the elector re-reads and decides again.
 */
export class LockConflictError extends LeaderElectionError {
  override name = 'LockConflictError';

  /**
   * @param lock - the lock's description, e.g. `Lease default/billing-worker`
   * @param operation - `create` or `update`
   */
  constructor(
    readonly lock: string,
    readonly operation: 'create' | 'update',
    options?: ErrorOptions,
  ) {
    super(lockConflictMessage(lock, operation), options);
  }
}

/**
 * How a failed Kubernetes API call is classified:
 * - `unauthorized` (401) and `forbidden` (403): configuration; fix credentials or RBAC.
 * - `not-found` (404 outside `get`), `conflict` (409 outside create/update), `invalid` (400/422 and
 *   other 4xx): the request or object is wrong.
 * - `transient` (429, 5xx, network errors) and `timeout` (our per-request deadline): retried
 *   within the election's deadlines.
 */
export type LeaseApiErrorKind =
  'forbidden' | 'unauthorized' | 'not-found' | 'conflict' | 'invalid' | 'transient' | 'timeout';

/**
 * A Kubernetes API call on a Lease failed. The message names the verb, the resource
 * (`leases.coordination.k8s.io`), the Lease and namespace, and what to fix.
 */
export class LeaseApiError extends LeaderElectionError {
  override name = 'LeaseApiError';
  /** Classification; `transient` and `timeout` are expected to heal on retry. */
  readonly kind: LeaseApiErrorKind;
  /** HTTP status code, if the API server answered. */
  readonly statusCode: number | undefined;
  /** The Kubernetes verb: `get`, `create` or `update`. */
  readonly verb: LeaseApiErrorDetails['verb'];
  /** The Lease's namespace. */
  readonly namespace: string;
  /** The Lease's name. */
  readonly leaseName: string;

  /** @param options - `cause`: the underlying `ApiException` or network error. */
  constructor(details: LeaseApiErrorDetails, options?: ErrorOptions) {
    super(leaseApiErrorMessage(details), options);
    this.kind = details.kind;
    this.statusCode = details.statusCode;
    this.verb = details.verb;
    this.namespace = details.namespace;
    this.leaseName = details.name;
  }

  /** True for kinds worth retrying without a configuration change. */
  get transient(): boolean {
    return this.kind === 'transient' || this.kind === 'timeout';
  }
}

/** Why a leader term ended; the reason of an aborted {@link LeaderTerm.signal}. */
export type LeaderTermEndReason =
  'stopped' | 'renew-deadline-exceeded' | 'lease-taken-over' | 'election-failed';

/**
 * The abort reason of a term's `signal`: the term ended, and work started under it should
 * stop. `reason` says why.
 */
export class LeaderTermEndedError extends LeaderElectionError {
  override name = 'LeaderTermEndedError';

  /**
   * @param reason - why the term ended
   * @param leaseTransitions - the term's fencing token
   */
  constructor(
    readonly reason: LeaderTermEndReason,
    readonly leaseTransitions: number,
  ) {
    super(leaderTermEndedMessage(reason, leaseTransitions));
  }
}

// ---------------------------------------------------------------------------
// Nest layer (NotLeaderException, an HttpException, lives in not-leader.exception.ts:
// this file stays framework-free)
// ---------------------------------------------------------------------------

/**
 * A `@LeaderOnly()` method was called on an instance no `LeaderModule` knows: the module is not
 * imported, the application has not initialized yet, or the instance was not created by Nest.
 * Thrown at call time, because without the module nothing runs at bootstrap to notice.
 */
export class LeaderModuleNotImportedError extends LeaderElectionError {
  override name = 'LeaderModuleNotImportedError';

  /**
   * @param className - class of the instance the method was called on, if any
   * @param methodName - the `@LeaderOnly()` method
   */
  constructor(
    readonly className: string | undefined,
    readonly methodName: string,
  ) {
    super(nestMessages.leaderModuleNotImported(className, methodName));
  }
}
