/**
 * Pod role labels: the leader labels its own Pod `<key>=leader`, every other candidate labels
 * its Pod `<key>=standby`, so `kubectl get pods -L <key>` shows who leads and a Service can
 * select the leader while every pod stays Ready — leader routing without leader-only readiness,
 * which deadlocks rollouts. Framework-free.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError } from '../errors.js';
import type { ElectionObservation, ElectionObserver } from '../core/election-observer.js';
import type { ElectionLogger, LeaderTerm } from '../core/leader-elector.options.js';
import { isDnsSubdomain, validateNamespace } from '../kubernetes/names.js';
import { observabilityMessages } from './observability.messages.js';
import { loadClientNode } from '../kubernetes/client-node.loader.js';
import { POD_RESOURCE } from '../kubernetes/kubernetes.messages.js';
import { withSharedConnection } from '../kubernetes/connection-pool.js';
import {
  type KubernetesRequestOptions,
  kubernetesRequestOptions,
  validateRequestTimeoutMs,
} from '../kubernetes/request-options.js';
import {
  classifyObserverFailure,
  consoleWarnings,
  FailureReporter,
  SerialQueue,
} from './observer-writes.js';
import { validateQualifiedName } from '../kubernetes/qualified-name.js';

/** Default label key: `kubectl get pods -L nest-leader/role` shows a ROLE column. */
export const DEFAULT_ROLE_LABEL_KEY = 'nest-leader/role';
/** The label's values. */
export const POD_ROLE = { leader: 'leader', standby: 'standby' } as const;
/**
 * The annotation the ReplicaSet controller ranks pods by when it scales down: the leader's Pod
 * gets `1`, every other candidate's none (0), so a scale-down or a rollout removes standbys
 * before the leader — a stalled rollout keeps the leader, a scale-down does not cost a handover.
 */
export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';
/** The leader's Pod's {@link POD_DELETION_COST_ANNOTATION}. */
export const LEADER_POD_DELETION_COST = '1';
/** The first retry of a failed write of this Pod's own label, ms; it doubles each time. */
const OWN_LABEL_RETRY_BASE_MS = 1_000;
/** The longest wait between two retries of this Pod's own label, ms. */
const OWN_LABEL_RETRY_MAX_MS = 60_000;

/** Default timeout of one PATCH, in ms. */
export const DEFAULT_POD_LABEL_REQUEST_TIMEOUT_MS = 5_000;

/** Options of {@link PodRoleLabelObserver}. */
export interface PodRoleLabelObserverOptions {
  /** Credentials and cluster: the same kubeconfig the LeaseLock uses. */
  kubeConfig: KubeConfig;
  /** This pod's name. Default `POD_NAME` (downward API `metadata.name`). */
  podName?: string;
  /** This pod's namespace. Default `POD_NAMESPACE` (downward API `metadata.namespace`). */
  namespace?: string;
  /** The label key; default `nest-leader/role`. */
  labelKey?: string;
  /** Where failures are logged (one warning per kind of failure); default the console. */
  logger?: Pick<ElectionLogger, 'warn' | 'debug'>;
  /** Timeout of each PATCH in ms; default 5000. */
  requestTimeoutMs?: number;
}

/**
 * Keeps `<labelKey>` on this candidate's Pod in step with its role:
 *
 * - first event of the election (before any term): `standby`;
 * - term started: first `standby` on the Pod of the previous holder (the last other holder this
 *   candidate observed; with the default identity, `POD_NAME`, identity and Pod name are the
 *   same), then `leader` on its own Pod — so a leader that crashed, or whose own PATCH failed,
 *   does not keep the label next to the new one;
 * - term ended: `standby` on its own Pod.
 *
 * Each write also sets the Pod's {@link POD_DELETION_COST_ANNOTATION} — `1` with `leader`,
 * removed with `standby` — so the ReplicaSet controller scales the leader's Pod down last.
 *
 * Writes are JSON merge patches of `metadata.labels` (and that annotation), queued in order and sent in the
 * background: the election never waits for them and never fails because of them (failures are
 * logged once per kind). A failed write of this Pod's own label (the API server unreachable, a
 * timeout, RBAC granted late) is retried — after 1 s, doubling up to 60 s — until it lands or
 * a newer role replaces it: without that, a leader whose `leader` PATCH failed once would stay
 * unlabelled, and unrouted under label routing, for its whole term. Await {@link flush} in `onStoppedLeading` to have the label flipped
 * before the Lease is released.
 *
 * Windows. Two `leader` labels: never, as long as the new leader's PATCH of the previous
 * holder's Pod succeeds (it is sent before its own); if it fails (RBAC, an identity that is not
 * a Pod name), until the old leader relabels itself. The previous holder is what a peer wrote
 * into the Lease: a holderIdentity that is not a DNS-1123 subdomain (`..`, a `/`, a newline —
 * no Pod has such a name) is never patched; that is logged once, quoted. A stale `leader` label on a Pod that no
 * longer leads: after a release, none if `onStoppedLeading` awaits `flush()`; after a step-down,
 * until its own PATCH lands — sent at renewDeadline, at least leaseDuration − renewDeadline
 * (5 s by default) before anyone else may acquire; after a crash, until the next leader's
 * demotion lands (about leaseDuration). No `leader` label at all: from the old leader's
 * demotion to the new leader's PATCH (a Service has no endpoints then, as during any failover).
 * Needs RBAC `patch` on `pods` in the namespace.
 *
 * @throws InvalidLeaderElectionOptionError (constructor) naming `podName`, `namespace`,
 *   `labelKey` or `requestTimeoutMs` when missing or invalid.
 */
export class PodRoleLabelObserver implements ElectionObserver {
  /** The label key written. */
  readonly labelKey: string;
  /** This pod. */
  readonly podName: string;
  readonly namespace: string;
  private readonly kubeConfig: KubeConfig;
  private readonly requestTimeoutMs: number;
  private readonly failures: FailureReporter;
  private readonly queue = new SerialQueue();
  private labelled = false;
  /** The last holder observed other than this candidate, and not `''`. */
  private previousHolder: string | undefined;
  /** The role last queued for this Pod: what a retry writes, unless a newer one replaced it. */
  private ownRole: string | undefined;
  /** Failed writes of this Pod's label in a row (the retry's backoff). */
  private ownFailures = 0;
  private ownRetry: NodeJS.Timeout | undefined;

  constructor(options: PodRoleLabelObserverOptions) {
    const podName = options.podName ?? process.env.POD_NAME;
    if (typeof podName !== 'string' || podName === '') {
      throw new InvalidLeaderElectionOptionError(
        'podName',
        observabilityMessages.podNameRule,
        podName,
      );
    }
    this.podName = podName;
    const namespace = options.namespace ?? process.env.POD_NAMESPACE;
    if (namespace === undefined || namespace === '') {
      throw new InvalidLeaderElectionOptionError(
        'namespace',
        observabilityMessages.podNamespaceRule,
        namespace,
      );
    }
    this.namespace = validateNamespace(namespace, 'namespace');
    this.labelKey = validateQualifiedName(
      options.labelKey ?? DEFAULT_ROLE_LABEL_KEY,
      'labelKey',
      observabilityMessages.labelKeyRule,
    );
    this.requestTimeoutMs = validateRequestTimeoutMs(
      options.requestTimeoutMs,
      DEFAULT_POD_LABEL_REQUEST_TIMEOUT_MS,
    );
    this.kubeConfig = withSharedConnection(options.kubeConfig);
    this.failures = new FailureReporter(options.logger ?? consoleWarnings);
  }

  /** Demotes the previous holder's Pod, then labels this Pod `leader`. */
  termStarted(_event: ElectionObservation & { term: LeaderTerm }): void {
    this.labelled = true;
    const previous = this.previousHolder;
    if (previous !== undefined && previous !== this.podName) {
      // A holderIdentity is whatever a peer wrote: only a Pod name goes into the PATCH's path.
      if (isDnsSubdomain(previous)) this.label(previous, POD_ROLE.standby, false);
      else {
        this.failures.report(
          'previous:not-a-pod-name',
          observabilityMessages.previousHolderNotAPodName(previous),
        );
      }
    }
    this.label(this.podName, POD_ROLE.leader, true);
  }

  /** Labels this Pod `standby`. */
  termEnded(_event: ElectionObservation & { term: LeaderTerm }): void {
    this.labelled = true;
    this.label(this.podName, POD_ROLE.standby, true);
  }

  /** Remembers the holder (to demote its Pod when this candidate takes over); first: `standby`. */
  leaderObserved(event: ElectionObservation & { holderIdentity: string }): void {
    if (event.holderIdentity !== '' && event.holderIdentity !== event.identity) {
      this.previousHolder = event.holderIdentity;
    }
    this.labelInitially();
  }

  /** The first request of the election: this Pod starts as `standby`. */
  lockRequest(_event: ElectionObservation): void {
    this.labelInitially();
  }

  /**
   * Resolves when every label write queued so far has landed or failed (each bounded by
   * `requestTimeoutMs`). Never rejects.
   */
  flush(): Promise<void> {
    return this.queue.idle();
  }

  private labelInitially(): void {
    if (this.labelled) return;
    this.labelled = true;
    this.label(this.podName, POD_ROLE.standby, true);
  }

  /**
   * Queues a merge patch of one label on `pod`; `own`: failures (404 too) are warnings, and a
   * failed write is retried (see the class).
   */
  private label(pod: string, role: string, own: boolean): void {
    if (own) {
      this.ownRole = role;
      clearTimeout(this.ownRetry);
      this.ownRetry = undefined;
    }
    let request: KubernetesRequestOptions | undefined;
    this.queue.push(
      async () => {
        const k8s = loadClientNode();
        request = kubernetesRequestOptions(this.requestTimeoutMs);
        await this.kubeConfig.makeApiClient(k8s.CoreV1Api).patchNamespacedPod(
          {
            name: pod,
            namespace: this.namespace,
            body: {
              metadata: {
                labels: { [this.labelKey]: role },
                // A merge patch's null removes the annotation.
                annotations: {
                  [POD_DELETION_COST_ANNOTATION]:
                    role === POD_ROLE.leader ? LEADER_POD_DELETION_COST : null,
                },
              },
            },
          },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch, request.options),
        );
        if (own) this.ownFailures = 0;
      },
      (error) => {
        const failure = classifyObserverFailure(
          {
            verb: 'patch',
            resource: POD_RESOURCE,
            name: pod,
            namespace: this.namespace,
            identity: this.podName,
            sent: request?.sent() ?? false,
          },
          error,
        );
        // Another candidate's identity need not be a Pod name: nothing to demote then.
        if (!own && failure.kind === 'not-found') return;
        const label = `${this.labelKey}=${role}`;
        this.failures.report(
          `${own ? 'own' : 'previous'}:${failure.kind}`,
          observabilityMessages.podLabelFailed(label, failure, own),
        );
        if (own) this.retryOwn(role);
      },
    );
  }

  /** Writes `role` on this Pod again after the backoff, unless a newer role was queued. */
  private retryOwn(role: string): void {
    if (this.ownRole !== role || this.ownRetry !== undefined) return;
    const delayMs = Math.min(
      OWN_LABEL_RETRY_BASE_MS * 2 ** Math.min(this.ownFailures, 16),
      OWN_LABEL_RETRY_MAX_MS,
    );
    this.ownFailures += 1;
    this.ownRetry = setTimeout(() => {
      this.ownRetry = undefined;
      if (this.ownRole === role) this.label(this.podName, role, true);
    }, delayMs);
    this.ownRetry.unref();
  }
}
