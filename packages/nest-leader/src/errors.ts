/**
 * Every error class nest-leader throws or reports, in one place, so users can
 * `instanceof`-check them. Their messages are built in `errors.messages.ts`.
 *
 * Framework-free: imported by every folder (`core/`, `locks/`, `kubernetes/`, …) and the Nest layer.
 */

import type {
  KubernetesApiErrorKind,
  KubernetesVerb,
  LeaderTermEndReason,
  LeadershipTransferFailure,
  ShardTermEndReason,
} from './errors.interfaces.js';
import type { LockOperation } from './locks/resource-lock.js';
import {
  invalidOptionMessage,
  kubeConfigErrorMessage,
  type KubeConfigSource,
  kubernetesApiErrorMessage,
  type KubernetesApiErrorDetails,
  leaderTermEndedMessage,
  leadershipTransferErrorMessage,
  shardTermEndedMessage,
  LEASE_RESOURCE,
  type LeaseApiErrorDetails,
  lockConflictMessage,
  missingPeerMessage,
  nestErrorMessages,
} from './errors.messages.js';

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
   * The offending value as given. Not enumerable, so `util.inspect`/`console.log` of the error
   * do not print it (it may be a secret passed to the wrong option); the message shows only
   * short strings and numbers, and the shape of anything else.
   */
  declare readonly value: unknown;

  /**
   * @param option - the option's name as the user spelled it, e.g. `renewDeadlineSeconds`
   * @param rule - the rule it breaks, e.g. `must be less than leaseDurationSeconds (15)`
   * @param value - the offending value (described, redacted, in the message)
   * @param election - the Nest layer's election the option belongs to (named in the message),
   *   if any
   */
  constructor(
    readonly option: string,
    readonly rule: string,
    value?: unknown,
    readonly election?: string,
  ) {
    super(invalidOptionMessage(option, rule, value, election));
    Object.defineProperty(this, 'value', { value, enumerable: false });
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
    readonly operation: Exclude<LockOperation, 'get'>,
    options?: ErrorOptions,
  ) {
    super(lockConflictMessage(lock, operation), options);
  }
}

export type {
  KubeConfigSource,
  KubernetesApiErrorDetails,
  LeaseApiErrorDetails,
} from './errors.messages.js';
export type {
  KubernetesApiErrorKind,
  KubernetesVerb,
  LeaderTermEndReason,
  LeadershipTransferFailure,
  LeaseApiErrorKind,
  ShardTermEndReason,
} from './errors.interfaces.js';

/**
 * A Kubernetes API call of a lock failed (see `classifyKubernetesApiError`). The message names
 * the verb, the resource (e.g. `leases.coordination.k8s.io`), the object and namespace, the
 * candidate, and what to fix. Subclass per resource: {@link LeaseApiError} for Leases;
 * `instanceof KubernetesApiError` catches all of them.
 */
export class KubernetesApiError extends LeaderElectionError {
  override name = 'KubernetesApiError';
  /** Classification; `transient` and `timeout` are expected to heal on retry. */
  readonly kind: KubernetesApiErrorKind;
  /** HTTP status code, if the API server answered. */
  readonly statusCode: number | undefined;
  /** The Kubernetes verb: `get`, `create`, `update` (locks, Events) or `patch` (pod labels). */
  readonly verb: KubernetesVerb;
  /** The resource with its API group, as RBAC names it: `leases.coordination.k8s.io`. */
  readonly resource: string;
  /** The object's namespace. */
  readonly namespace: string;
  /** The object's name. */
  readonly objectName: string;

  /** @param options - `cause`: the underlying `ApiException`, network or configuration error. */
  constructor(details: KubernetesApiErrorDetails, options?: ErrorOptions) {
    super(kubernetesApiErrorMessage(details), options);
    this.kind = details.kind;
    this.statusCode = details.statusCode;
    this.verb = details.verb;
    this.resource = details.resource;
    this.namespace = details.namespace;
    this.objectName = details.name;
  }

  /** True for kinds worth retrying without a configuration change (`transient`, `timeout`). */
  get transient(): boolean {
    return this.kind === 'transient' || this.kind === 'timeout';
  }
}

/**
 * A Kubernetes API call on a Lease (`leases.coordination.k8s.io`) failed: the
 * {@link KubernetesApiError} of `LeaseLock`.
 */
export class LeaseApiError extends KubernetesApiError {
  override name = 'LeaseApiError';
  /** The Lease's name (same as `objectName`). */
  readonly leaseName: string;

  /** @param details - as {@link KubernetesApiError}'s, the resource being Leases. */
  constructor(details: LeaseApiErrorDetails, options?: ErrorOptions) {
    super({ ...details, resource: LEASE_RESOURCE }, options);
    this.leaseName = details.name;
  }
}

/**
 * A Kubernetes configuration exists but cannot be used: `KUBECONFIG` names a missing file, a
 * kubeconfig is not valid YAML or has no usable current context, or a pod has
 * `KUBERNETES_SERVICE_HOST` but no ServiceAccount token. Thrown at startup by lock selection
 * instead of silently falling back to a single-host lock.
 */
export class KubeConfigError extends LeaderElectionError {
  override name = 'KubeConfigError';

  /**
   * @param source - where the configuration came from (`KUBECONFIG`, `~/.kube/config`, in-cluster)
   * @param path - the file concerned, if any
   * @param problem - what is wrong and what to do, e.g. `has no current-context: …`
   */
  constructor(
    readonly source: KubeConfigSource,
    readonly path: string | undefined,
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super(kubeConfigErrorMessage(source, path, problem), options);
  }
}

/**
 * `SidecarLock` could not learn the leader from its leader-elector sidecar: the sidecar did not
 * answer (`reason: 'unreachable'`, with the network error as `cause`), has not read its Lease
 * yet (`'not-ready'`), or answered something other than its JSON (`'unexpected'`). Thrown by
 * `SidecarLock.get`, `create` and `update`; the elector logs it and asks again at its next
 * retry, as for any failed lock request.
 */
export class SidecarLockError extends LeaderElectionError {
  override name = 'SidecarLockError';

  /**
   * @param url - the sidecar's address asked, e.g. `http://localhost:4040/ready`
   * @param reason - what went wrong, see the class
   * @param message - the lock's text for it (`locks/lock.messages.ts`)
   * @param options - `cause`: the network error, for `unreachable`
   */
  constructor(
    readonly url: string,
    readonly reason: 'unreachable' | 'not-ready' | 'unexpected',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * `FileLock` wrote nothing because its file mutex (a `<path>.lock` directory beside the file,
 * shared by the processes of this host) failed it: another process held it past the wait
 * (`reason: 'busy'`), this process held it so long that others may have broken it as stale
 * (`'held-too-long'`, a stalled event loop), or it was removed or replaced while held
 * (`'lost'`). Thrown by `FileLock.create` and `update`; the elector logs it and retries.
 */
export class FileLockMutexError extends LeaderElectionError {
  override name = 'FileLockMutexError';

  /**
   * @param path - the lock file, e.g. `/tmp/nest-leader/app/default.json`
   * @param reason - what went wrong, see the class
   * @param message - the lock's text for it (`locks/lock.messages.ts`)
   */
  constructor(
    readonly path: string,
    readonly reason: 'busy' | 'held-too-long' | 'lost',
    message: string,
  ) {
    super(message);
  }
}

/**
 * `FileLock` refused a path another user could control: the lock's directory is a symbolic
 * link, not a directory, owned by another user, or writable by its group or everyone; or the
 * lease file or its mutex is a symbolic link or not a regular file (a FIFO, a device). Whoever
 * controls the directory could forge or delete the record (two leaders) or point it elsewhere.
 * Thrown by `FileLock.get`, `create` and `update`; the elector logs it as an error and retries,
 * so fixing the directory (the message says how) lets the election go on.
 */
export class FileLockUnsafePathError extends LeaderElectionError {
  override name = 'FileLockUnsafePathError';

  /**
   * @param path - the directory or file refused
   * @param reason - what is wrong with it, see the class
   * @param message - the lock's text for it (`locks/lock.messages.ts`)
   */
  constructor(
    readonly path: string,
    readonly reason:
      'symlink' | 'not-a-directory' | 'other-owner' | 'writable-by-others' | 'not-a-regular-file',
    message: string,
  ) {
    super(message);
  }
}

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

/**
 * The abort reason of a shard term's `signal` (a sharded election): the term ended, and work
 * started under it should stop. `reason` says why; `token` is the term's fencing token.
 */
export class ShardTermEndedError extends LeaderElectionError {
  override name = 'ShardTermEndedError';

  /**
   * @param reason - why the shard term ended
   * @param shard - the shard, `0 ≤ shard < shards`
   * @param token - the term's fencing token
   */
  constructor(
    readonly reason: ShardTermEndReason,
    readonly shard: number,
    readonly token: number,
  ) {
    super(shardTermEndedMessage(reason, shard, token));
  }
}

/**
 * `LeaderElector.transferLeadership` could not hand the Lease over; `reason` says how far it
 * got (see {@link LeadershipTransferFailure}).
 */
export class LeadershipTransferError extends LeaderElectionError {
  override name = 'LeadershipTransferError';

  /**
   * @param reason - why the transfer failed
   * @param lock - the lock's description, e.g. `Lease default/billing-worker`
   * @param to - the candidate the Lease was to be handed to; `undefined` when none was named
   *   and none could be chosen (`no-candidate`)
   */
  constructor(
    readonly reason: LeadershipTransferFailure,
    readonly lock: string,
    readonly to: string | undefined,
    options?: ErrorOptions,
  ) {
    super(leadershipTransferErrorMessage(reason, lock, to, options?.cause), options);
  }
}

// ---------------------------------------------------------------------------
// Nest layer (NotLeaderException, an HttpException, lives in not-leader.exception.ts:
// this file stays framework-free)
// ---------------------------------------------------------------------------

/**
 * A `@LeaderOnly()` method cannot run because no `LeaderModule` runs: the application starts
 * without the module (thrown by the instance's `onApplicationBootstrap`, `when: 'bootstrap'`),
 * or the method was called while no application with `LeaderModule` had initialized in this
 * process (`when: 'call'`: not imported, or called before `app.init()`). A call on an instance
 * Nest did not create while a `LeaderModule` runs is {@link LeaderOnlyInstanceNotProvidedError}.
 */
export class LeaderModuleNotImportedError extends LeaderElectionError {
  override name = 'LeaderModuleNotImportedError';

  /**
   * @param className - class of the instance the method was called on, if any
   * @param methodName - the `@LeaderOnly()` method
   * @param when - `'bootstrap'`: found by the bootstrap check (nothing called the method yet);
   *   `'call'` (default): the method was called
   */
  constructor(
    readonly className: string | undefined,
    readonly methodName: string,
    readonly when: 'bootstrap' | 'call' = 'call',
  ) {
    super(nestErrorMessages.leaderModuleNotImported(className, methodName, when));
  }
}

/**
 * A `@LeaderOnly()` method was called on an instance no Nest application created, while a
 * `LeaderModule` is running in this process: the class is in no module's `providers` (or
 * `controllers`), or the instance was made with `new` instead of being injected. `LeaderModule`
 * binds the instances Nest creates; this one it never saw. Thrown (rejected, for `async`
 * methods) at call time. When no `LeaderModule` runs at all, the error is
 * {@link LeaderModuleNotImportedError} instead.
 */
export class LeaderOnlyInstanceNotProvidedError extends LeaderElectionError {
  override name = 'LeaderOnlyInstanceNotProvidedError';

  /**
   * @param className - class of the instance the method was called on, if any
   * @param methodName - the `@LeaderOnly()` method
   */
  constructor(
    readonly className: string | undefined,
    readonly methodName: string,
  ) {
    super(nestErrorMessages.leaderOnlyInstanceNotProvided(className, methodName));
  }
}

/**
 * The Nest layer was used in a way that cannot work, found when the module or class is
 * declared (before the application starts): `@LeaderOnly()` on something that is neither a
 * method nor a class, or `LeaderModule.registerElectionAsync()` without `useFactory`,
 * `useClass` or `useExisting`. The message names the call and what it needs.
 */
export class LeaderModuleUsageError extends LeaderElectionError {
  override name = 'LeaderModuleUsageError';

  /** @param message - what was used wrongly and how to fix it (`nest/nest.messages.ts`) */
  constructor(message: string) {
    super(message);
  }
}

/**
 * A `@LeaderOnly()` method or a leadership event handler names an election that is not
 * registered in the application. Thrown at bootstrap (when the application initializes).
 */
export class UnknownElectionError extends LeaderElectionError {
  override name = 'UnknownElectionError';

  /**
   * @param election - the name that was asked for
   * @param knownElections - the names registered in the application
   * @param className - class of the method that asked, if any
   * @param methodName - the method that asked, if any
   */
  constructor(
    readonly election: string,
    readonly knownElections: readonly string[],
    readonly className?: string,
    readonly methodName?: string,
  ) {
    super(nestErrorMessages.unknownElection(election, knownElections, className, methodName));
  }
}

/** Two elections of one application share a name. Thrown when the application is created. */
export class DuplicateElectionError extends LeaderElectionError {
  override name = 'DuplicateElectionError';

  /** @param election - the name registered twice */
  constructor(readonly election: string) {
    super(nestErrorMessages.duplicateElection(election));
  }
}

/**
 * One object (a shared `useValue` instance, or the prototype of a request-scoped or transient
 * class) holds `@LeaderOnly()` methods in two Nest applications alive at once: its calls cannot
 * tell which application's elections decide. Thrown at bootstrap of the second application.
 */
export class LeaderOnlyBindingConflictError extends LeaderElectionError {
  override name = 'LeaderOnlyBindingConflictError';

  /** @param className - class of the shared object */
  constructor(readonly className: string | undefined) {
    super(nestErrorMessages.bindingConflict(className));
  }
}

// ---------------------------------------------------------------------------
// Observability (observability/)
// ---------------------------------------------------------------------------

/**
 * A feature needs an optional peer dependency that is not installed, e.g. the Prometheus
 * observer without `prom-client`. Thrown when the feature is constructed, never at import.
 */
export class MissingPeerDependencyError extends LeaderElectionError {
  override name = 'MissingPeerDependencyError';

  /**
   * @param packageName - the npm package to install, e.g. `prom-client`
   * @param range - the supported version range, e.g. `^15.0.0`
   * @param feature - what needs it, e.g. `PrometheusElectionObserver`
   */
  constructor(
    readonly packageName: string,
    readonly range: string,
    readonly feature: string,
    options?: ErrorOptions,
  ) {
    super(missingPeerMessage(packageName, range, feature), options);
  }
}

// ---------------------------------------------------------------------------
// Fenced work (leader-only/)
// ---------------------------------------------------------------------------

/**
 * A `@LeaderOnly({ verify: 'before-and-after' })` method finished, but the verification after
 * it found that this replica no longer held the Lease in the term the method started under
 * (or could not confirm it). The method's result is withheld: roll back what it did, or make
 * sure its writes were fenced with `leaseTransitions` (the token of the term it ran under).
 */
export class LeadershipLostDuringWorkError extends LeaderElectionError {
  override name = 'LeadershipLostDuringWorkError';

  /**
   * @param election - the election (`'default'` for `forRoot()`'s)
   * @param leaseTransitions - the fencing token of the term the method ran under
   * @param className - class of the method's instance
   * @param methodName - the `@LeaderOnly()` method
   */
  constructor(
    readonly election: string,
    readonly leaseTransitions: number,
    readonly className: string | undefined,
    readonly methodName: string,
  ) {
    super(
      nestErrorMessages.leadershipLostDuringWork(election, leaseTransitions, className, methodName),
    );
  }
}
