/**
 * Every user-facing message (errors and log lines) in one place.
 * Framework-free: used by the core and the Nest layer.
 */

import { inspect } from 'node:util';
import type {
  KubernetesApiErrorKind,
  KubernetesVerb,
  LeaderTermEndReason,
  LeadershipTransferFailure,
} from './errors.interfaces.js';
import type { LockOperation } from './locks/resource-lock.js';

// ---------------------------------------------------------------------------
// Core (election/, locks/)
// ---------------------------------------------------------------------------

/** Kubernetes resource name used in API error messages and RBAC hints. */
export const LEASE_RESOURCE = 'leases.coordination.k8s.io';

/** ConfigMaps, as RBAC names them (core API group). */
export const CONFIGMAP_RESOURCE = 'configmaps';

function show(value: unknown): string {
  return inspect(value, { depth: 1, breakLength: Infinity });
}

/** Longest string shown as is in an option error; longer ones may be secrets (tokens). */
const MAX_SHOWN_STRING_LENGTH = 32;

/**
 * An option's value for an error message, without leaking what it may hold: numbers,
 * booleans, `null`/`undefined` as they are; short printable strings quoted; long strings,
 * objects, arrays and functions only by their shape (a token passed to the wrong option
 * must not end up in a log).
 */
export function describeOptionValue(value: unknown): string {
  switch (typeof value) {
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return String(value);
    case 'string':
      return value.length <= MAX_SHOWN_STRING_LENGTH && !/[\p{Cc}\p{Cf}]/u.test(value)
        ? JSON.stringify(value)
        : `a string of ${value.length} characters`;
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default: {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `an array of ${value.length} items`;
      const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
      return typeof name === 'string' && name !== '' && name !== 'Object'
        ? `a ${name}`
        : 'an object';
    }
  }
}

/**
 * A name from a record or a peer (holderIdentity) for a log line: JSON-quoted, so control
 * characters in a foreign record cannot forge log lines.
 */
export function quoted(name: string): string {
  return JSON.stringify(name);
}

function seconds(ms: number): string {
  return `${Math.round(ms) / 1000}s`;
}

/** Message of `InvalidLeaderElectionOptionError`. */
export function invalidOptionMessage(
  option: string,
  rule: string,
  value: unknown,
  election?: string,
): string {
  const of = election === undefined ? '' : ` of election ${quoted(election)}`;
  return `Invalid leader election option ${quoted(option)}${of}: ${rule} (got ${describeOptionValue(value)}).`;
}

/** Message of `LockConflictError`. */
export function lockConflictMessage(
  lock: string,
  operation: Exclude<LockOperation, 'get'>,
): string {
  return operation === 'create'
    ? `${lock} already exists (another candidate created it first).`
    : `${lock} was changed by someone else since it was read (stale version).`;
}

/** What a `KubernetesApiError` message is built from. */
export interface KubernetesApiErrorDetails {
  /** Classification of the failure. */
  kind: KubernetesApiErrorKind;
  /** The Kubernetes verb that failed. */
  verb: KubernetesVerb;
  /** The resource with its API group, as RBAC names it, e.g. `leases.coordination.k8s.io`. */
  resource: string;
  /** The object's name. */
  name: string;
  /** The object's namespace. */
  namespace: string;
  /** HTTP status, if the API server answered. */
  statusCode?: number;
  /** The candidate's identity, if known. */
  identity?: string;
  /** `message` of the API server's Status (with `statusCode`), or the network error's message. */
  serverMessage?: string;
  /** For `configuration`: what is wrong and what to fix (see `kubernetesConfigurationProblems`). */
  problem?: string;
  /**
   * For `forbidden`: the verbs to grant. Default: a lock's `get`, `create` and `update`; the
   * observers' requests name their one verb (`create` on Events, `patch` on pods).
   */
  rbacVerbs?: readonly string[];
}

/** What a `LeaseApiError` message is built from: the details minus the resource (Leases). */
export type LeaseApiErrorDetails = Omit<KubernetesApiErrorDetails, 'resource'>;

const kubernetesApiFixes: Record<KubernetesApiErrorKind, (d: KubernetesApiErrorDetails) => string> =
  {
    forbidden: (d) =>
      d.verb === 'watch'
        ? `RBAC denies it: grant the pod's ServiceAccount the verb watch on ${d.resource} ` +
          `in namespace "${d.namespace}" (resourceNames: ["${d.name}"] is enough), or set ` +
          'watchLease: false to poll.'
        : `RBAC denies it: grant the pod's ServiceAccount the ` +
          (d.rbacVerbs ? `verb ${d.rbacVerbs.join(', ')}` : 'verbs get, create and update') +
          ` on ${d.resource} in namespace "${d.namespace}" (a Role + RoleBinding).`,
    unauthorized: () =>
      'The API server rejected the credentials: check the kubeconfig or the mounted ' +
      'ServiceAccount token (automountServiceAccountToken).',
    configuration: (d) => d.problem ?? kubernetesConfigurationProblems.requestNotPrepared,
    'not-found': (d) =>
      d.verb === 'create'
        ? `Namespace "${d.namespace}" probably does not exist: create it or set the namespace option.`
        : 'The object was deleted meanwhile.',
    conflict: () => 'The object changed meanwhile; the elector re-reads it.',
    invalid: () =>
      'The API server rejected the object as invalid; this is a bug in nest-leader or a ' +
      'conflicting admission policy.',
    transient: () => 'Retrying within the election deadlines.',
    timeout: () =>
      'No answer within the per-request timeout; retrying within the election deadlines.',
  };

/**
 * What to fix for each kind of `configuration` failure of a Kubernetes request: the kubeconfig
 * cannot work as written, and retrying will not help.
 */
export const kubernetesConfigurationProblems = {
  requestNotPrepared:
    'The request could not be prepared from the kubeconfig (credentials or TLS settings ' +
    'of its current user and cluster): fix the kubeconfig.',
  execPlugin:
    "The kubeconfig's exec credential plugin (users[].user.exec) failed: run its command " +
    'by hand to see why, or fix the command, its arguments or its environment.',
  missingFile: (path: string) =>
    `The kubeconfig names a file that cannot be read: ${path}. Fix client-certificate, ` +
    'client-key or certificate-authority in the kubeconfig, or create the file.',
  httpNotAllowed:
    "The cluster's server URL is http:// but the kubeconfig does not set " +
    'insecure-skip-tls-verify: use the https:// URL of the API server.',
  httpToHttps:
    "The cluster's server URL is http:// but the API server speaks HTTPS on that port: " +
    'use https:// in the kubeconfig.',
  tlsVerification: (code: string) =>
    `The API server's TLS certificate was not accepted (${code}): the kubeconfig's ` +
    'certificate-authority(-data) is not the CA that signed it, or the server URL names ' +
    'another host. Fix the CA or the server URL.',
};

/** Message of `KubernetesApiError`: verb, resource, object, namespace, candidate, what to fix. */
export function kubernetesApiErrorMessage(d: KubernetesApiErrorDetails): string {
  const who = d.identity ? ` as candidate "${d.identity}"` : '';
  const status = d.statusCode === undefined ? d.kind : `${d.kind} (HTTP ${d.statusCode})`;
  const label = d.statusCode === undefined ? 'Cause' : 'Server said';
  const said = d.serverMessage?.trim().replace(/\.+$/, '');
  const server = said ? ` ${label}: ${said}.` : '';
  return (
    `Cannot ${d.verb} ${d.resource} "${d.name}" in namespace "${d.namespace}"${who}: ` +
    `${status}. ${kubernetesApiFixes[d.kind](d)}${server}`
  );
}

/** Where a Kubernetes configuration was found (see `findKubernetesConfig`). */
export type KubeConfigSource = 'kubeConfig option' | 'KUBECONFIG' | '~/.kube/config' | 'in-cluster';

/** Message of `KubeConfigError`. */
export function kubeConfigErrorMessage(
  source: KubeConfigSource,
  path: string | undefined,
  problem: string,
): string {
  const where =
    source === 'KUBECONFIG'
      ? `The kubeconfig named by KUBECONFIG${path ? ` (${path})` : ''}`
      : source === '~/.kube/config'
        ? `The kubeconfig ${path ?? '~/.kube/config'}`
        : source === 'in-cluster'
          ? 'The in-cluster configuration'
          : `The kubeconfig of the kubeConfig option${path ? ` (${path})` : ''}`;
  return (
    `${where} ${problem} A Kubernetes configuration is present, so nest-leader will not fall ` +
    'back to a single-host file lock; fix it, or choose the lock explicitly (lock option).'
  );
}

/** Problems `loadKubernetesConfig` reports, completing "The kubeconfig … ". */
export const kubeConfigProblems = {
  missing: 'does not exist.',
  empty: 'is empty.',
  notMergeable: (error: unknown) => `cannot be merged: ${errorText(error)}.`,
  unreadable: (error: unknown) => `cannot be read: ${errorText(error)}.`,
  notYaml: (error: unknown) => `is not a valid kubeconfig (YAML): ${errorText(error)}.`,
  noCurrentContext:
    'has no current-context: run `kubectl config use-context <name>`, or set current-context.',
  unknownContext: (context: string) => `has current-context "${context}", which is not defined.`,
  unknownCluster: (context: string, cluster: string) =>
    `has context "${context}" naming cluster "${cluster}", which is not defined.`,
  noServer: (cluster: string) => `has cluster "${cluster}" without a server URL.`,
  allMissing: (paths: readonly string[]) =>
    `names only files that do not exist: ${paths.join(', ')}.`,
  noToken: (path: string) =>
    `has KUBERNETES_SERVICE_HOST set (this process runs in a pod) but no ServiceAccount token at ` +
    `${path}: set automountServiceAccountToken: true on the pod or its ServiceAccount, or pass ` +
    'kubeConfig.',
  noHost: (path: string) =>
    `has a ServiceAccount token at ${path} but KUBERNETES_SERVICE_HOST or ` +
    'KUBERNETES_SERVICE_PORT is not set (Kubernetes sets both in every pod): pass kubeConfig.',
};

/** Why a term ended, in words. */
const termEndReasonText: Record<LeaderTermEndReason, string> = {
  stopped: 'the elector was stopped',
  'handed-off': 'leadership was handed to another candidate',
  'renew-deadline-exceeded': 'the Lease was not renewed within renewDeadline',
  'lease-taken-over': 'another candidate holds the Lease',
  'lease-deleted': 'the Lease was deleted',
  'election-failed': 'the election loop failed',
};

/** Message of `LeaderTermEndedError`. */
export function leaderTermEndedMessage(
  reason: LeaderTermEndReason,
  leaseTransitions: number,
): string {
  return `Leader term ${leaseTransitions} ended: ${termEndReasonText[reason]}.`;
}

/** Message of `LeadershipTransferError`. */
export function leadershipTransferErrorMessage(
  reason: LeadershipTransferFailure,
  lock: string,
  to: string,
  cause: unknown,
): string {
  const what = `Cannot hand ${lock} to ${quoted(to)}`;
  switch (reason) {
    case 'not-leader':
      return `${what}: this candidate is not leading it (or is already handing it over).`;
    case 'lease-lost':
      return (
        `${what}: the term ended, but the Lease no longer names this candidate at its term ` +
        '(it expired and was taken, or was deleted); nothing was handed over.'
      );
    case 'write-failed':
      return (
        `${what}: the term ended, but the handoff could not be written; the Lease still names ` +
        `this candidate, which campaigns again: ${errorText(cause)}`
      );
  }
}

/** Log lines of the elector; `lock` is the lock's description, e.g. `Lease default/x`. */
export const electionMessages = {
  started: (identity: string, lock: string) =>
    `Candidate "${identity}" is campaigning for ${lock}.`,
  startedLeading: (identity: string, lock: string, leaseTransitions: number) =>
    `Candidate "${identity}" acquired ${lock} and started leading (term ${leaseTransitions}).`,
  stoppedLeading: (identity: string, lock: string, reason: LeaderTermEndReason) =>
    `Candidate "${identity}" stopped leading ${lock}: ${reason}.`,
  newLeader: (identity: string, lock: string) => `New leader of ${lock}: ${quoted(identity)}.`,
  lateAcquisition: (
    lock: string,
    leaseTransitions: number,
    elapsedMs: number,
    renewDeadlineMs: number,
  ) =>
    `${lock} was acquired (term ${leaseTransitions}), but the answer was handled ` +
    `${seconds(elapsedMs)} after the request was sent, past renewDeadline ` +
    `(${seconds(renewDeadlineMs)}; the process was paused or its event loop blocked): not ` +
    'leading on it; another candidate may already have taken over. Trying again.',
  renewDeadlineExceeded: (lock: string, renewDeadlineMs: number) =>
    `${lock} was not renewed within renewDeadline (${seconds(renewDeadlineMs)}); stepping down.`,
  takenOver: (lock: string, holder: string) =>
    `${lock} is now held by ${quoted(holder)}; stepping down.`,
  leaseDeleted: (lock: string) =>
    `${lock} was deleted while this candidate led it; stepping down at once.`,
  leaseMissing: (lock: string, holder: string, waitMs: number) =>
    `${lock} does not exist, but it was last seen held by ${holder ? quoted(holder) : '(nobody)'}: ` +
    `not creating it for another ${seconds(waitMs)} (leaseDuration since that record last ` +
    'changed and since the Lease was found missing), so a leader that has not noticed the ' +
    'deletion yet stops first.',
  transitionsWrapped: (lock: string, max: number) =>
    `${lock}: leaseTransitions reached ${max}, the largest value Lease.spec.leaseTransitions ` +
    '(an int32) holds; this term restarts it at 0. Fencing tokens restart: reset downstream ' +
    'systems that reject tokens not greater than the last one seen.',
  accessDeniedAfterSuccess: (operation: string, lock: string, graceMs: number) =>
    `${operation} of ${lock} was refused (HTTP 403) although these credentials worked ` +
    `before; the API server's authorization cache is probably still syncing after a restart. ` +
    `Retrying; reported as an RBAC problem if it lasts ${seconds(graceMs)}.`,
  unknownOption: (owner: string, closest: string | undefined) =>
    `is not an option of ${owner}` + (closest ? `; did you mean ${quoted(closest)}?` : ''),
  duplicateIdentity: (lock: string, identity: string) =>
    `${lock} was renewed by another process using the same identity "${identity}"; ` +
    'stepping down. Every candidate needs a unique identity (POD_NAME, or hostname-pid).',
  namesakeHolds: (lock: string, identity: string) =>
    `${lock} names this candidate's identity "${identity}" but was not written by it, and ` +
    'someone keeps renewing it: another process uses the same identity. Not taking it until ' +
    'it expires. Every candidate needs a unique identity (POD_NAME, or hostname-pid).',
  recampaign: (lock: string) => `Lost ${lock}; campaigning again with a new term.`,
  stoppedAfterLoss: (lock: string) => `Lost ${lock}; not campaigning again (onLost: 'stop').`,
  released: (identity: string, lock: string) =>
    `Candidate "${identity}" released ${lock} (holder cleared): a follower that watches it takes ` +
    'it as soon as it sees the change, one that polls at its next retry.',
  releaseSkipped: (lock: string, holder: string) =>
    `Not releasing ${lock}: it is held by ${holder ? quoted(holder) : '(nobody)'}.`,
  releaseFailed: (lock: string, error: unknown) =>
    `Could not release ${lock}; it expires after its leaseDuration instead: ${errorText(error)}`,
  scheduleLedgerFailed: (lock: string, error: unknown) =>
    `The schedule ledger writer for ${lock} threw; the stored ledger is kept: ${errorText(error)}`,
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
  watchUnavailable: (lock: string, error: unknown) =>
    `Cannot watch ${lock}, so followers poll it every retryPeriod instead (more API requests, ` +
    `slower handovers): ${errorText(error)}`,
  watchInterrupted: (lock: string, error: unknown) =>
    `Watch of ${lock} failed; polling until it reconnects: ${errorText(error)}`,
  watchSilent: (lock: string) =>
    `Watch of ${lock} missed a change; polling until it delivers again, and reconnecting it.`,
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
  clientNodeMissing: (error: unknown) =>
    'Kubernetes Leases need the peer dependency @kubernetes/client-node (^2), which could not ' +
    `be loaded: ${errorText(error)}. Install it, or choose lock 'file' or 'memory'.`,
  kubeConfigRule:
    'must be a KubeConfig from @kubernetes/client-node (new KubeConfig() + loadFromFile(), ' +
    'loadFromCluster(), …) or the path of a kubeconfig file',
  kubeConfigFileRule: (problem: string) =>
    `must be a KubeConfig or the path of a usable kubeconfig file; that file ${problem.replace(/\.$/, '')}`,
  noCluster: () =>
    'kubeConfig has no current cluster: load one (KubeConfig.loadFromFile/loadFromCluster), ' +
    'pass the path of a kubeconfig file, or use FileLock for a single host.',
  sidecarUrlRule:
    'must be the http(s) URL of a nest-leader-elector --http address, e.g. http://localhost:4040',
  sidecarUnreachable: (url: string, error: unknown) =>
    `The leader-elector sidecar did not answer GET ${url}: ${errorText(error)}. Is it running ` +
    'in this pod with --http on that port?',
  sidecarNotReady: (url: string) =>
    `The leader-elector sidecar (${url}) has not read its Lease yet; asking again.`,
  sidecarUnexpected: (url: string, status: number) =>
    `GET ${url} answered HTTP ${status} without the sidecar's JSON ({"leader","name",` +
    '"leaseTransitions"}): is that address a nest-leader-elector sidecar?',
  unreadableLeaderAnnotation: (lock: string, reason: string) =>
    `${lock}: the annotation control-plane.alpha.kubernetes.io/leader is ${reason}. Treating ` +
    'the lock as held by an unknown candidate: it is taken over only after it stays unchanged ' +
    'for leaseDuration. Find out who writes it before relying on this lock.',
  fileLockBusy: (path: string) => `FileLock ${path}: timed out waiting for the file mutex.`,
  fileLockHeldTooLong: (path: string, limitMs: number) =>
    `FileLock ${path}: the file mutex was held for more than ${limitMs} ms (a stalled event ` +
    'loop?); another process may have broken it as stale, so nothing was written.',
  fileMutexLost: (path: string) =>
    `FileLock ${path}: the file mutex was removed or replaced while held; nothing was written.`,
};

/** Texts of lock selection (`LOCK_KINDS` in `locks/lock-selection.ts`). */
export const lockSelectionMessages = {
  autoSummary:
    'a Kubernetes Lease when any Kubernetes configuration exists (kubeConfig option, ' +
    'KUBECONFIG, in-cluster ServiceAccount token or KUBERNETES_SERVICE_HOST, ~/.kube/config), ' +
    'a file lock only when none does (a memory lock under Jest or Vitest)',
  kubernetesSummary: 'a coordination.k8s.io/v1 Lease; fails at startup without a configuration',
  configmapSummary:
    "client-go's historical record in a ConfigMap annotation (legacy fleets); fails at startup " +
    'without a configuration',
  fileSummary:
    "a file in this project's directory under the OS temp directory, shared by this project's replicas on this host only",
  memorySummary: 'a lock in this process only: always leader (tests)',
  fileLockChosen: (lock: string) =>
    'No Kubernetes cluster configured (KUBECONFIG unset, no in-cluster ServiceAccount token ' +
    `or KUBERNETES_SERVICE_HOST, no ~/.kube/config): electing on ${lock}, which only ` +
    "replicas on this host share. Set lock: 'file' to say so explicitly.",
  kubeConfigIgnored: (kind: string) =>
    `The kubeConfig option is ignored: lock '${kind}' does not use Kubernetes.`,
  noClusterRule:
    "'kubernetes' needs a cluster: none found (KUBECONFIG unset, no in-cluster ServiceAccount " +
    "token or KUBERNETES_SERVICE_HOST, no ~/.kube/config); pass kubeConfig, or use lock 'file' " +
    'outside Kubernetes',
  lockRule: (kinds: readonly string[]) =>
    `must be ${kinds.map((k) => `'${k}'`).join(', ')} or a ResourceLock (an object with ` +
    'description, get, create and update)',
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
  /** The election's name (`'default'` for `forRoot()`'s). */
  election: string;
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
  transferUnsupported: (election: string) =>
    `The elector of election ${quoted(election)} is a custom one without transferLeadership(); ` +
    'provide a LeaderElector (or an elector with that method) to hand leadership over.',
  starting: (d: NestStartDetails) =>
    `Leader election ${d.election === 'default' ? '' : `"${d.election}" `}starting: identity "${d.identity}", lock ${d.kind} (${d.lock})` +
    `${d.namespace ? `, namespace "${d.namespace}"` : ''}, leaseDuration ${d.leaseDurationSeconds}s, ` +
    `renewDeadline ${d.renewDeadlineSeconds}s, retryPeriod ${d.retryPeriodSeconds}s, ` +
    `shutdownGrace ${d.shutdownGraceMs}ms.`,
  shutdownGraceRule: 'must be a finite number of milliseconds, zero or more',
  notLeader: (leader: string | undefined) =>
    leader
      ? `This replica is not the leader; the leader is "${leader}".`
      : 'This replica is not the leader; no leader is known yet.',
  skipped: (className: string, methodName: string, leader: string | undefined) =>
    `Skipped ${className}.${methodName}(): not the leader (leader: ${leader ? `"${leader}"` : 'none'}); ` +
    'its further skips are not logged until this replica has led.',
  scheduleModuleMissing: (handlers: readonly string[]) =>
    `${handlers.join(', ')} ${handlers.length === 1 ? 'has' : 'have'} @Cron/@Interval/@Timeout ` +
    'and @LeaderOnly(), but ScheduleModule.forRoot() is not imported: these jobs never run on ' +
    'any replica. Import ScheduleModule.forRoot() (from @nestjs/schedule) in the root module.',
  shutdownHooksMissing: (graceMs: number) =>
    `No SIGTERM handler ${graceMs / 1000} s after start: call app.enableShutdownHooks() in ` +
    'main.ts, or a SIGTERM (every Kubernetes rollout) kills the leader without draining its ' +
    'leader-only work or releasing the Lease, and the others wait a whole leaseDuration ' +
    '(15 s by default) instead of about a second.',
  healthWithoutLeaderModule:
    'LeaderHealthIndicator needs LeaderModule: import LeaderModule.forRoot() in the root module ' +
    '(it is global), then inject LeaderHealthIndicator wherever you need it; it need not be ' +
    'listed in any providers.',
  terminusMissing: (error: unknown) =>
    `LeaderHealthIndicator needs @nestjs/terminus (npm install @nestjs/terminus; the 11 major for ` +
    `a CommonJS Nest 11 app): ${errorText(error)}`,
  drainTimedOut: (election: string, count: number, graceMs: number) =>
    `${count} leader-only invocation(s) of election "${election}" still running after ` +
    `shutdownGraceMs (${graceMs}ms); giving up leadership anyway.`,
  electionNameRule:
    "must be a non-empty string other than 'default' (the election of LeaderModule.forRoot())",
  unknownElection: (
    election: string,
    known: readonly string[],
    className: string | undefined,
    methodName: string | undefined,
  ) =>
    `${className && methodName ? `${className}.${methodName}() uses` : 'Asked for'} election ` +
    `"${election}", which is not registered in this application. Known elections: ` +
    `${known.length ? known.map((name) => `"${name}"`).join(', ') : '(none)'}. Register it with ` +
    (election === 'default'
      ? 'LeaderModule.forRoot().'
      : `LeaderModule.registerElection({ name: '${election}', leaseName: … }).`),
  duplicateElection: (election: string) =>
    `Election "${election}" is registered twice in this application: give every ` +
    'LeaderModule.registerElection() its own name (and forRoot() only once).',
  bindingConflict: (className: string | undefined) =>
    `${className ?? 'An object'} has @LeaderOnly() methods in two Nest applications that are ` +
    'alive at once (a shared useValue instance, or a request-scoped or transient class): its ' +
    'calls cannot tell which application decides. Close the first application, or give each ' +
    'application its own instance.',
  handlerFailed: (handler: string, event: string, error: unknown) =>
    `Leadership ${event} handler ${handler} failed; ignored: ${errorText(error)}`,
  nonStaticHandler: (handler: string) =>
    `Cannot register leadership event handler ${handler}: it is defined in a request-scoped or ` +
    'transient provider.',
  verifyRule: "must be 'before' or 'before-and-after' (or absent: no verification)",
  leadershipLostDuringWork: (
    election: string,
    leaseTransitions: number,
    className: string | undefined,
    methodName: string,
  ) =>
    `${className ?? '(no instance)'}.${methodName}() finished, but this replica no longer leads ` +
    `election "${election}" in term ${leaseTransitions} (verified after the work): its result ` +
    `is withheld. Roll back its effects, or rely on writes fenced with token ${leaseTransitions}.`,
  leaderModuleNotImported: (
    className: string | undefined,
    methodName: string,
    when: 'bootstrap' | 'call' = 'call',
  ) =>
    when === 'bootstrap'
      ? `${className ?? '(no class)'} has a @LeaderOnly() method ${methodName}(), but no ` +
        'LeaderModule is imported in this application, so it could never run: import ' +
        'LeaderModule.forRoot() in the root module.'
      : `@LeaderOnly() ${className ?? '(no instance)'}.${methodName}() was called, but no ` +
        'LeaderModule knows this instance: import LeaderModule.forRoot() in the application, ' +
        'let Nest create the instance (not `new`), and call it after the application initialized.',
};

// ---------------------------------------------------------------------------
// Observability (metrics, Kubernetes Events, pod role labels)
// ---------------------------------------------------------------------------

/** Kubernetes resource of Events (API group events.k8s.io), as RBAC names it. */
export const EVENT_RESOURCE = 'events.events.k8s.io';
/** Kubernetes resource of Pods (core API group), as RBAC names it. */
export const POD_RESOURCE = 'pods';

/** Messages of the observers in `observability/`. */
export const observabilityMessages = {
  missingPeer: (packageName: string, range: string, feature: string) =>
    `${feature} needs the optional peer dependency "${packageName}" (${range}), which is not ` +
    `installed: add it to your application (npm install ${packageName}).`,
  foreignMetric: (name: string) =>
    `the registry already has a metric "${name}" that nest-leader did not create; use another ` +
    'registry, or remove that metric',
  registryRule: 'must be a prom-client Registry (registerMetric, getSingleMetric)',
  /** `note` of the Event recorded when a candidate starts a term (client-go's wording). */
  becameLeaderNote: (identity: string) => `${identity} became leader`,
  /** `note` of the Event recorded when a term ends. */
  stoppedLeadingNote: (identity: string, reason: LeaderTermEndReason) =>
    `${identity} stopped leading: ${reason} (${termEndReasonText[reason]})`,
  eventFailed: (lease: string, error: Error) =>
    `Could not record a Kubernetes Event on ${lease}: ${error.message} Leader election is ` +
    'unaffected; further failures of this kind are logged at debug level.',
  podLabelFailed: (label: string, error: Error) =>
    `Could not set the pod role label ${label}: ${error.message} Leader election is ` +
    'unaffected; further failures of this kind are logged at debug level.',
  podNameRule:
    'must name this pod: set POD_NAME from the downward API (env valueFrom fieldRef ' +
    'metadata.name) or pass podName',
  podNamespaceRule:
    "must be the pod's namespace: set POD_NAMESPACE from the downward API (env valueFrom " +
    'fieldRef metadata.namespace) or pass namespace',
  labelKeyRule:
    'must be a label key: a name of at most 63 characters (letters, digits, "-", "_", "."), ' +
    'optionally prefixed by a DNS subdomain and "/", e.g. "example.com/role"',
  needsLease: (option: string, election: string, lock: string) =>
    `${option} is on for election "${election}", but it elects on ${lock}, not a Kubernetes ` +
    `Lease: ${option} does nothing there.`,
  reportingControllerRule:
    'must be a qualified name of at most 63 characters (letters, digits, "-", "_", "."), ' +
    'optionally prefixed by a DNS subdomain and "/", e.g. "example.com/billing-worker"',
};

// ---------------------------------------------------------------------------
// The leader-elector sidecar (src/sidecar; core only, no Nest)
// ---------------------------------------------------------------------------

/** Messages of the `nest-leader-elector` sidecar CLI. */
export const sidecarMessages = {
  usage: () =>
    [
      'Usage: nest-leader-elector --election <name> [options]',
      '',
      'Elects one leader among the pods running it, on a coordination.k8s.io/v1 Lease.',
      'Flags (compatible with the retired leader-elector:0.5 image):',
      '  --election <name>             Lease name (required)',
      '  --election-namespace <ns>     Lease namespace (default "default")',
      '  --id <identity>               this candidate (default: the hostname, i.e. the pod name)',
      '  --ttl <duration>              lease duration, Go syntax: 10s, 1m, 1500ms (default 10s);',
      '                                renew deadline ttl/2, retry period ttl/4; the Lease holds',
      '                                whole seconds, so the lease duration is ttl rounded up',
      '  --http <host:port>            serve GET / ({"name","last_update"}), /ready, /healthz',
      '  --leader-file <path>          a file that exists only while this pod leads',
      '  --help                        this text',
    ].join('\n'),
  durationRule:
    'must be a Go duration of at least 1s, such as 10s, 1m30s or 1500ms (units ns, us, ms, s, m, h)',
  httpRule: 'must be host:port or :port, with a port from 0 to 65535',
  requiredRule: 'is required',
  emptyRule: 'must not be empty',
  unknownFlag: (detail: string) => `${detail}\n\nRun nest-leader-elector --help for the flags.`,
  ttlRounded: (ttlMs: number, leaseDurationSeconds: number) =>
    `--ttl ${ttlMs / 1000}s is not a whole number of seconds: the Lease's leaseDurationSeconds ` +
    `is ${leaseDurationSeconds} (rounded up); renew deadline and retry period stay ttl/2 and ttl/4.`,
  starting: (identity: string, lock: string, leaseDurationSeconds: number, http: string) =>
    `nest-leader-elector: candidate "${identity}" on ${lock}, leaseDuration ` +
    `${leaseDurationSeconds}s${http ? `, serving http://${http}/` : ''}.`,
  leaderFileFailed: (path: string, error: unknown) =>
    `Could not update the leader file ${path}: ${errorText(error)}`,
  stopping: (signal: string) => `nest-leader-elector: ${signal} received; releasing the Lease.`,
};
