/**
 * The messages of the typed errors of `errors.ts`, and the few texts those messages share
 * with the folders (the Lease resource, why a term ended). Every other text lives in its
 * folder's messages file (`core/election.messages.ts`, `locks/lock.messages.ts`, …).
 *
 * Framework-free, and imports nothing of the library but the lock types and `format.ts`, so
 * `errors.ts` stays importable from every folder.
 */

import type {
  KubernetesApiErrorKind,
  KubernetesVerb,
  LeaderTermEndReason,
  LeadershipTransferFailure,
  ShardTermEndReason,
} from './errors.interfaces.js';
import { describeOptionValue, errorText, quoted } from './format.js';
import type { LockOperation } from './locks/resource-lock.js';

/** Kubernetes resource name used in API error messages and RBAC hints. */
export const LEASE_RESOURCE = 'leases.coordination.k8s.io';

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

/**
 * What to fix when a Kubernetes request could not be prepared and no more precise
 * `configuration` problem was found (see `kubernetesConfigurationProblems`).
 */
export const requestNotPreparedProblem =
  'The request could not be prepared from the kubeconfig (credentials or TLS settings ' +
  'of its current user and cluster): fix the kubeconfig.';

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
    configuration: (d) => d.problem ?? requestNotPreparedProblem,
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

/** Why a term ended, in words. */
export const termEndReasonText: Record<LeaderTermEndReason, string> = {
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

const shardTermEndReasonText: Record<ShardTermEndReason, string> = {
  revoked: 'the coordinator moved the shard',
  'member-epoch-ended': "this member's Lease was not renewed in time, evicted or deleted",
  stopped: 'the sharded election is stopping',
};

/** Message of `ShardTermEndedError`. */
export function shardTermEndedMessage(
  reason: ShardTermEndReason,
  shard: number,
  token: number,
): string {
  return `Term of shard ${shard} (token ${token}) ended: ${shardTermEndReasonText[reason]}.`;
}

/** Message of `LeadershipTransferError`. */
export function leadershipTransferErrorMessage(
  reason: LeadershipTransferFailure,
  lock: string,
  to: string | undefined,
  cause: unknown,
): string {
  const what = `Cannot hand ${lock} to ${to === undefined ? 'a preferred candidate' : quoted(to)}`;
  switch (reason) {
    case 'no-candidate':
      return (
        `${what}: no other candidate advertises itself in it (candidates advertise when they ` +
        'have a podTemplateHash or priority, on a Lease or memory lock)' +
        (cause === undefined ? '' : `, or it could not be read (${errorText(cause)})`) +
        '; name the target, or call stop() to release it to anyone. The term goes on.'
      );
    case 'not-leader':
      return `${what}: this candidate is not leading it (or is already handing it over).`;
    case 'not-accepted':
      return (
        `${what}: ${to === undefined ? 'no candidate it was offered to' : 'the candidate'} ` +
        'accepted the handoff offer in time (not running, or cannot write the Lease); its ' +
        'advertisement was removed and nothing was handed over. The term goes on' +
        (cause === undefined ? '.' : ` (${errorText(cause)}).`)
      );
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

/** Messages of the Nest layer's typed errors (`UnknownElectionError`, …). */
export const nestErrorMessages = {
  transferUnsupported: (election: string) =>
    `The elector of election ${quoted(election)} is a custom one without transferLeadership(); ` +
    'provide a LeaderElector (or an elector with that method) to hand leadership over.',
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
        'application with LeaderModule has initialized in this process: import ' +
        'LeaderModule.forRoot() in the root module, and call it after app.init() (or listen()).',
  leaderOnlyInstanceNotProvided: (className: string | undefined, methodName: string) => {
    const name = className ?? '(no class)';
    return (
      `@LeaderOnly() ${name}.${methodName}() was called on an instance Nest did not create, so ` +
      `no LeaderModule knows it: add ${name} to a module's providers (controllers, for a ` +
      `controller), and get the instance from Nest (inject it, or app.get(${name})) instead of ` +
      '`new`.'
    );
  },
} as const;

/** Message of `MissingPeerDependencyError`. */
export function missingPeerMessage(packageName: string, range: string, feature: string): string {
  return (
    `${feature} needs the optional peer dependency "${packageName}" (${range}), which is not ` +
    `installed: add it to your application (npm install ${packageName}).`
  );
}
