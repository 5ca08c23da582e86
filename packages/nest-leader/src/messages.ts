/**
 * Every user-facing message (errors and log lines) in one place.
 * Framework-free: used by the core and the Nest layer.
 */

import { inspect } from 'node:util';
import type { LeaderTermEndReason, LeaseApiErrorKind } from './errors.js';

// ---------------------------------------------------------------------------
// Core (election/, locks/)
// ---------------------------------------------------------------------------

/** Kubernetes resource name used in API error messages and RBAC hints. */
export const LEASE_RESOURCE = 'leases.coordination.k8s.io';

function show(value: unknown): string {
  return inspect(value, { depth: 1, breakLength: Infinity });
}

function seconds(ms: number): string {
  return `${Math.round(ms) / 1000}s`;
}

/** Message of `InvalidLeaderElectionOptionError`. */
export function invalidOptionMessage(option: string, rule: string, value: unknown): string {
  return `Invalid leader election option "${option}": ${rule} (got ${show(value)}).`;
}

/** Message of `LockConflictError`. */
export function lockConflictMessage(lock: string, operation: 'create' | 'update'): string {
  return operation === 'create'
    ? `${lock} already exists (another candidate created it first).`
    : `${lock} was changed by someone else since it was read (stale version).`;
}

/** What a {@link LeaseApiError} message is built from. */
export interface LeaseApiErrorDetails {
  /** Classification of the failure. */
  kind: LeaseApiErrorKind;
  /** The Kubernetes verb that failed. */
  verb: 'get' | 'create' | 'update';
  /** The Lease's name. */
  name: string;
  /** The Lease's namespace. */
  namespace: string;
  /** HTTP status, if the API server answered. */
  statusCode?: number;
  /** The candidate's identity, if known. */
  identity?: string;
  /** `message` of the API server's Status (with `statusCode`), or the network error's message. */
  serverMessage?: string;
}

const leaseApiFixes: Record<LeaseApiErrorKind, (d: LeaseApiErrorDetails) => string> = {
  forbidden: (d) =>
    `RBAC denies it: grant the pod's ServiceAccount the verbs get, create and update on ` +
    `${LEASE_RESOURCE} in namespace "${d.namespace}" (a Role + RoleBinding).`,
  unauthorized: () =>
    'The API server rejected the credentials: check the kubeconfig or the mounted ' +
    'ServiceAccount token (automountServiceAccountToken).',
  'not-found': (d) =>
    d.verb === 'create'
      ? `Namespace "${d.namespace}" probably does not exist: create it or set the namespace option.`
      : 'The Lease was deleted meanwhile; it will be created again.',
  conflict: () => 'The Lease changed meanwhile; the elector re-reads it.',
  invalid: () =>
    'The API server rejected the Lease as invalid; this is a bug in nest-leader or a ' +
    'conflicting admission policy.',
  transient: () => 'Retrying within the election deadlines.',
  timeout: () =>
    'No answer within the per-request timeout; retrying within the election deadlines.',
};

/** Message of `LeaseApiError`: verb, resource, Lease, namespace, candidate, what to fix. */
export function leaseApiErrorMessage(d: LeaseApiErrorDetails): string {
  const who = d.identity ? ` as candidate "${d.identity}"` : '';
  const status = d.statusCode === undefined ? d.kind : `${d.kind} (HTTP ${d.statusCode})`;
  const label = d.statusCode === undefined ? 'Cause' : 'Server said';
  const server = d.serverMessage ? ` ${label}: ${d.serverMessage}.` : '';
  return (
    `Cannot ${d.verb} ${LEASE_RESOURCE} "${d.name}" in namespace "${d.namespace}"${who}: ` +
    `${status}. ${leaseApiFixes[d.kind](d)}${server}`
  );
}

/** Message of `LeaderTermEndedError`. */
export function leaderTermEndedMessage(
  reason: LeaderTermEndReason,
  leaseTransitions: number,
): string {
  const why: Record<LeaderTermEndReason, string> = {
    stopped: 'the elector was stopped',
    'renew-deadline-exceeded': 'the Lease was not renewed within renewDeadline',
    'lease-taken-over': 'another candidate holds the Lease',
    'election-failed': 'the election loop failed',
  };
  return `Leader term ${leaseTransitions} ended: ${why[reason]}.`;
}

/** Log lines of the elector; `lock` is the lock's description, e.g. `Lease default/x`. */
export const electionMessages = {
  started: (identity: string, lock: string) =>
    `Candidate "${identity}" is campaigning for ${lock}.`,
  startedLeading: (identity: string, lock: string, leaseTransitions: number) =>
    `Candidate "${identity}" acquired ${lock} and started leading (term ${leaseTransitions}).`,
  stoppedLeading: (identity: string, lock: string, reason: LeaderTermEndReason) =>
    `Candidate "${identity}" stopped leading ${lock}: ${reason}.`,
  newLeader: (identity: string, lock: string) => `New leader of ${lock}: "${identity}".`,
  renewDeadlineExceeded: (lock: string, renewDeadlineMs: number) =>
    `${lock} was not renewed within renewDeadline (${seconds(renewDeadlineMs)}); stepping down.`,
  takenOver: (lock: string, holder: string) => `${lock} is now held by "${holder}"; stepping down.`,
  duplicateIdentity: (lock: string, identity: string) =>
    `${lock} was renewed by another process using the same identity "${identity}"; ` +
    'stepping down. Every candidate needs a unique identity (POD_NAME, or hostname-pid).',
  recampaign: (lock: string) => `Lost ${lock}; campaigning again with a new term.`,
  stoppedAfterLoss: (lock: string) => `Lost ${lock}; not campaigning again (onLost: 'stop').`,
  released: (identity: string, lock: string) =>
    `Candidate "${identity}" released ${lock}; another candidate can take it at once.`,
  releaseSkipped: (lock: string, holder: string) =>
    `Not releasing ${lock}: it is held by "${holder || '(nobody)'}".`,
  releaseFailed: (lock: string, error: unknown) =>
    `Could not release ${lock}; it expires after its leaseDuration instead: ${errorText(error)}`,
  callbackFailed: (callback: string, error: unknown) =>
    `Leader election callback ${callback} threw; ignored: ${errorText(error)}`,
  loopFailed: (lock: string, error: unknown) =>
    `Leader election loop for ${lock} failed unexpectedly; no longer campaigning: ${errorText(error)}`,
  lockOperationFailed: (operation: string, lock: string, error: unknown) =>
    `${operation} of ${lock} failed: ${errorText(error)}`,
  repeated: (message: string, count: number, sinceMs: number) =>
    `${message} (repeated ${count} times in the last ${seconds(sinceMs)})`,
  recovered: (lock: string, failures: number) =>
    `${lock} reachable again after ${failures} failed attempt(s).`,
  stoppedNotStartable: () => 'This LeaderElector was stopped; create a new one to campaign again.',
};

/** Reasons `LeaderElector.health()` reports, as client-go's HealthzAdaptor. */
export const healthMessages = {
  leaseExpired: (
    lock: string,
    sinceRenewMs: number,
    leaseDurationMs: number,
    toleranceMs: number,
  ) =>
    `Believes it leads ${lock} but last renewed it ${seconds(sinceRenewMs)} ago ` +
    `(leaseDuration ${seconds(leaseDurationMs)} + tolerance ${seconds(toleranceMs)}).`,
  loopFailed: (lock: string, error: unknown) =>
    `The election loop for ${lock} stopped unexpectedly: ${errorText(error)}`,
  stoppedAfterLoss: (lock: string) =>
    `Lost ${lock} and stopped campaigning (onLost: 'stop'); restart to rejoin the election.`,
};

/** Messages of the locks. */
export const lockMessages = {
  noCluster: () =>
    'kubeConfig has no current cluster: load one (KubeConfig.loadFromDefault/loadFromCluster) ' +
    'or use FileLock for a single host.',
  fileLockBusy: (path: string) => `FileLock ${path}: timed out waiting for the file mutex.`,
  fileLockHeldTooLong: (path: string, limitMs: number) =>
    `FileLock ${path}: the file mutex was held for more than ${limitMs} ms (a stalled event ` +
    'loop?); another process may have broken it as stale, so nothing was written.',
};

/** One-line text of any thrown value. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : show(error);
}

// ---------------------------------------------------------------------------
// Nest layer (module, service, decorators, health indicator)
// ---------------------------------------------------------------------------

/** What the Nest layer logs once when the elector starts. */
export interface NestStartDetails {
  identity: string;
  /** The lock's description, e.g. `Lease default/billing-worker`. */
  lock: string;
  kind: string;
  namespace?: string;
  leaseDurationSeconds: number;
  renewDeadlineSeconds: number;
  retryPeriodSeconds: number;
  shutdownGraceMs: number;
}

/** Messages of `LeaderModule`, `LeaderElectionService`, `@LeaderOnly()` and friends. */
export const nestMessages = {
  starting: (d: NestStartDetails) =>
    `Leader election starting: identity "${d.identity}", lock ${d.kind} (${d.lock})` +
    `${d.namespace ? `, namespace "${d.namespace}"` : ''}, leaseDuration ${d.leaseDurationSeconds}s, ` +
    `renewDeadline ${d.renewDeadlineSeconds}s, retryPeriod ${d.retryPeriodSeconds}s, ` +
    `shutdownGrace ${d.shutdownGraceMs}ms.`,
  fileLockFallback: (lock: string) =>
    `No Kubernetes cluster configured (no in-cluster ServiceAccount token, KUBECONFIG or ` +
    `~/.kube/config): electing on ${lock}, which only replicas on this host share.`,
  noClusterRule:
    "'kubernetes' needs a cluster: none found (no in-cluster ServiceAccount token, KUBECONFIG " +
    "or ~/.kube/config); pass kubeConfig, or use lock 'auto' or 'file' outside Kubernetes",
  lockRule: "must be 'auto', 'kubernetes', 'file', 'memory' or a ResourceLock",
  shutdownGraceRule: 'must be a finite number of milliseconds, zero or more',
  notLeader: (leader: string | undefined) =>
    leader
      ? `This replica is not the leader; the leader is "${leader}".`
      : 'This replica is not the leader; no leader is known yet.',
  skipped: (className: string, methodName: string, leader: string | undefined) =>
    `Skipped ${className}.${methodName}(): not the leader (leader: ${leader ? `"${leader}"` : 'none'}).`,
  drainTimedOut: (count: number, graceMs: number) =>
    `${count} leader-only invocation(s) still running after shutdownGraceMs (${graceMs}ms); ` +
    'giving up leadership anyway.',
  handlerFailed: (handler: string, event: string, error: unknown) =>
    `Leadership ${event} handler ${handler} failed; ignored: ${errorText(error)}`,
  nonStaticHandler: (handler: string) =>
    `Cannot register leadership event handler ${handler}: it is defined in a request-scoped or ` +
    'transient provider.',
  leaderModuleNotImported: (className: string | undefined, methodName: string) =>
    `@LeaderOnly() ${className ?? '(no instance)'}.${methodName}() was called, but no LeaderModule ` +
    'knows this instance: import LeaderModule.forRoot() in the application, let Nest create ' +
    'the instance (not `new`), and call it after the application initialized.',
};
