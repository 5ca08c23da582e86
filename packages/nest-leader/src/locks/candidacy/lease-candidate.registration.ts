import type {
  CoordinationV1beta1Api,
  KubeConfig,
  V1beta1LeaseCandidate,
} from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError } from '../../errors.js';
import { classifyKubernetesApiError } from '../../kubernetes/api-errors.js';
import { loadClientNode } from '../../kubernetes/client-node.loader.js';
import { withSharedConnection } from '../../kubernetes/connection-pool.js';
import { validateKubeConfig } from '../../kubernetes/kube-config.loader.js';
import { toMicroTime } from '../../kubernetes/micro-time.js';
import { validateLeaseName, validateNamespace } from '../../kubernetes/names.js';
import {
  kubernetesRequestOptions,
  validateRequestTimeoutMs,
} from '../../kubernetes/request-options.js';
import type { KubernetesVerb } from '../../errors.interfaces.js';
import type { Candidacy, CandidacyListener } from './candidacy.js';
import { DEFAULT_LEASE_REQUEST_TIMEOUT_MS } from '../kubernetes-object/kubernetes-object.lock.js';
import { candidacyMessages, LEASE_CANDIDATE_RESOURCE } from './candidacy.messages.js';
import { lockMessages } from '../lock.messages.js';
import { parseLeaseTime } from '../resource-lock.js';

/** The only strategy Kubernetes' election controller decides (KEP-4355). */
export const OLDEST_EMULATION_VERSION = 'OldestEmulationVersion';

/** How often the registration reads its LeaseCandidate for pings by default, ms. */
export const DEFAULT_PING_CHECK_INTERVAL_MS = 2_000;
/** How often the registration renews without a ping by default, ms (client-go: 5 minutes). */
export const DEFAULT_CANDIDATE_RENEW_INTERVAL_MS = 5 * 60_000;

/** Options of {@link LeaseCandidateRegistration}. */
export interface LeaseCandidateRegistrationOptions {
  /** A loaded `KubeConfig` with a current cluster, or the path of a kubeconfig file. */
  kubeConfig: KubeConfig | string;
  /** Namespace of the Lease and of the LeaseCandidate: a DNS-1123 label. */
  namespace: string;
  /** The Lease the candidacy is for (`spec.leaseName`). */
  leaseName: string;
  /**
   * The candidate's identity: the LeaseCandidate's name, and the `holderIdentity` the
   * controller writes when it picks this candidate. Letters, digits, `-`, `_` and `.` (a
   * ConfigMap key, as the API server requires of LeaseCandidate names).
   */
  identity: string;
  /** `spec.binaryVersion`: the candidate's version, strict semantic version (`1.4.2`). */
  binaryVersion: string;
  /**
   * `spec.emulationVersion`: the version whose behaviour it emulates, ≤ `binaryVersion`;
   * default `binaryVersion`. With `OldestEmulationVersion` the controller picks the lowest
   * emulation version, then the lowest binary version, then the oldest LeaseCandidate.
   */
  emulationVersion?: string;
  /** `spec.strategy`; default `OldestEmulationVersion` (the only one the controller decides). */
  strategy?: string;
  /**
   * How often it reads its LeaseCandidate to answer pings, ms; default 2000. The controller
   * waits 5 s for answers, so keep it well below that.
   */
  pingCheckIntervalMs?: number;
  /** How often it renews without being pinged, ms; default 5 minutes (as client-go). */
  renewIntervalMs?: number;
  /** Upper bound of one request in ms; default 10 000. */
  requestTimeoutMs?: number;
}

/** A strict semantic version: `MAJOR.MINOR.PATCH[-pre][+build]`, as the API server parses it. */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
/** A LeaseCandidate name: a ConfigMap key. */
const CANDIDATE_NAME = /^[-._a-zA-Z0-9]{1,253}$/;

/**
 * A candidate's `coordination.k8s.io/v1beta1` LeaseCandidate for Kubernetes' coordinated leader
 * election (KEP-4355), as client-go's `leaderelection.LeaseCandidate`: created (or, if one by
 * this name exists, renewed with this spec) when `run` starts, renewed when the controller
 * pings it (`spec.pingTime` newer than `spec.renewTime`: answered once per ping) and every
 * `renewIntervalMs`, deleted when `run`'s signal aborts (client-go leaves it to the API
 * server's garbage collector, 30 minutes after its last renewal).
 *
 * Pings are noticed by reading the LeaseCandidate every `pingCheckIntervalMs` (one GET per
 * candidate per interval; client-go watches it instead).
 *
 * Needs the API server's `CoordinatedLeaderElection` feature gate (beta, off by default through
 * Kubernetes 1.36) and `--runtime-config=coordination.k8s.io/v1beta1=true`, and RBAC `get`,
 * `create`, `update`, `delete` on `leasecandidates` (`coordination.k8s.io`) in the namespace.
 * Failed requests are reported to the listener and retried at the next check.
 */
export class LeaseCandidateRegistration implements Candidacy {
  readonly description: string;
  /** The LeaseCandidate's name (the candidate's identity). */
  readonly identity: string;
  readonly namespace: string;
  readonly leaseName: string;
  private readonly spec: { binaryVersion: string; emulationVersion: string; strategy: string };
  private readonly pingCheckIntervalMs: number;
  private readonly renewIntervalMs: number;
  private readonly requestTimeoutMs: number;
  private readonly api: CoordinationV1beta1Api;
  private readonly execPlugin: boolean;

  /**
   * @throws InvalidLeaderElectionOptionError naming the option: an invalid namespace, Lease
   *   name, identity, version (not a strict semantic version, or emulation above binary),
   *   interval or kubeconfig.
   */
  constructor(options: LeaseCandidateRegistrationOptions) {
    this.namespace = validateNamespace(options.namespace, 'namespace');
    this.leaseName = validateLeaseName(options.leaseName, 'leaseName');
    if (typeof options.identity !== 'string' || !CANDIDATE_NAME.test(options.identity)) {
      throw new InvalidLeaderElectionOptionError(
        'identity',
        candidacyMessages.identityRule,
        options.identity,
      );
    }
    this.identity = options.identity;
    const binaryVersion = validateVersion(options.binaryVersion, 'binaryVersion');
    const emulationVersion = validateVersion(
      options.emulationVersion ?? binaryVersion,
      'emulationVersion',
    );
    if (compareVersions(emulationVersion, binaryVersion) > 0) {
      throw new InvalidLeaderElectionOptionError(
        'emulationVersion',
        candidacyMessages.emulationAboveBinary(binaryVersion),
        emulationVersion,
      );
    }
    const strategy = options.strategy ?? OLDEST_EMULATION_VERSION;
    if (typeof strategy !== 'string' || strategy === '') {
      throw new InvalidLeaderElectionOptionError(
        'strategy',
        candidacyMessages.strategyRule,
        strategy,
      );
    }
    this.spec = { binaryVersion, emulationVersion, strategy };
    this.pingCheckIntervalMs = validateInterval(
      options.pingCheckIntervalMs ?? DEFAULT_PING_CHECK_INTERVAL_MS,
      'pingCheckIntervalMs',
    );
    this.renewIntervalMs = validateInterval(
      options.renewIntervalMs ?? DEFAULT_CANDIDATE_RENEW_INTERVAL_MS,
      'renewIntervalMs',
    );
    this.requestTimeoutMs = validateRequestTimeoutMs(
      options.requestTimeoutMs,
      DEFAULT_LEASE_REQUEST_TIMEOUT_MS,
    );
    const kubeConfig = validateKubeConfig(options.kubeConfig, 'kubeConfig');
    if (!kubeConfig.getCurrentCluster()) {
      throw new InvalidLeaderElectionOptionError('kubeConfig', lockMessages.noCluster(), undefined);
    }
    this.execPlugin = Boolean(kubeConfig.getCurrentUser()?.exec);
    this.api = withSharedConnection(kubeConfig).makeApiClient(
      loadClientNode().CoordinationV1beta1Api,
    );
    this.description = `LeaseCandidate ${this.namespace}/${this.identity}`;
  }

  /** See {@link Candidacy.run} and the class description. */
  async run(signal: AbortSignal, listener: CandidacyListener = {}): Promise<void> {
    let registered = false;
    let lastRenewMs = Number.NEGATIVE_INFINITY;
    /** The pingTime last answered (ms), so a ping is answered once even under clock skew. */
    let answeredPingMs: number | undefined;
    while (!signal.aborted) {
      let operation: KubernetesVerb = 'get';
      try {
        const current = await this.read(signal);
        if (!current) {
          operation = 'create';
          await this.create(signal);
          lastRenewMs = performance.now();
          registered = true;
          listener.onRegistered?.();
        } else {
          const pingMs = pendingPingMs(current);
          const pinged = pingMs !== undefined && pingMs !== answeredPingMs;
          if (!registered || pinged || performance.now() - lastRenewMs >= this.renewIntervalMs) {
            operation = 'update';
            await this.renew(current, signal);
            lastRenewMs = performance.now();
            if (pinged) answeredPingMs = pingMs;
            if (!registered) listener.onRegistered?.();
            else if (pinged) listener.onPingAnswered?.();
            registered = true;
          }
        }
      } catch (error) {
        if (signal.aborted) break;
        listener.onFailure?.(operation, this.classify(operation, error, signal));
      }
      await abortableSleep(this.pingCheckIntervalMs, signal);
    }
    await this.withdraw(listener);
  }

  private async read(signal: AbortSignal): Promise<V1beta1LeaseCandidate | undefined> {
    try {
      return await this.api.readNamespacedLeaseCandidate(
        { name: this.identity, namespace: this.namespace },
        kubernetesRequestOptions(this.requestTimeoutMs, signal).options,
      );
    } catch (error) {
      if (error instanceof loadClientNode().ApiException && error.code === 404) return undefined;
      throw error;
    }
  }

  private async create(signal: AbortSignal): Promise<void> {
    await this.api.createNamespacedLeaseCandidate(
      {
        namespace: this.namespace,
        body: {
          apiVersion: 'coordination.k8s.io/v1beta1',
          kind: 'LeaseCandidate',
          metadata: { name: this.identity, namespace: this.namespace },
          spec: { ...this.spec, leaseName: this.leaseName, renewTime: toMicroTime(new Date()) },
        },
      },
      kubernetesRequestOptions(this.requestTimeoutMs, signal).options,
    );
  }

  /** PUTs `current` with this candidate's spec and `renewTime = now` (its pingTime kept). */
  private async renew(current: V1beta1LeaseCandidate, signal: AbortSignal): Promise<void> {
    await this.api.replaceNamespacedLeaseCandidate(
      {
        name: this.identity,
        namespace: this.namespace,
        body: {
          ...current,
          spec: {
            ...current.spec,
            ...this.spec,
            leaseName: current.spec?.leaseName ?? this.leaseName,
            renewTime: toMicroTime(new Date()),
          },
        },
      },
      kubernetesRequestOptions(this.requestTimeoutMs, signal).options,
    );
  }

  /** Deletes the LeaseCandidate (a missing one is fine), bounded by the request timeout. */
  private async withdraw(listener: CandidacyListener): Promise<void> {
    try {
      await this.api.deleteNamespacedLeaseCandidate(
        { name: this.identity, namespace: this.namespace },
        kubernetesRequestOptions(this.requestTimeoutMs).options,
      );
    } catch (error) {
      if (error instanceof loadClientNode().ApiException && error.code === 404) return;
      listener.onFailure?.('delete', this.classify('delete', error, undefined));
    }
  }

  private classify(verb: KubernetesVerb, error: unknown, signal: AbortSignal | undefined): Error {
    return classifyKubernetesApiError(
      {
        verb,
        resource: LEASE_CANDIDATE_RESOURCE,
        name: this.identity,
        namespace: this.namespace,
        identity: this.identity,
        sent: true,
        execPlugin: this.execPlugin,
      },
      error,
      signal,
    );
  }
}

/** The pingTime (ms) of a ping not answered yet (`pingTime` after `renewTime`), if any. */
function pendingPingMs(candidate: V1beta1LeaseCandidate): number | undefined {
  const ping = parseLeaseTime(candidate.spec?.pingTime);
  if (!ping) return undefined;
  const renew = parseLeaseTime(candidate.spec?.renewTime);
  return renew && renew.getTime() >= ping.getTime() ? undefined : ping.getTime();
}

function validateVersion(value: unknown, option: string): string {
  if (typeof value !== 'string' || !SEMVER.test(value)) {
    throw new InvalidLeaderElectionOptionError(option, candidacyMessages.versionRule, value);
  }
  return value;
}

function validateInterval(value: unknown, option: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidLeaderElectionOptionError(option, candidacyMessages.intervalRule, value);
  }
  return value;
}

/** Compares MAJOR.MINOR.PATCH of two semantic versions (pre-release and build ignored). */
function compareVersions(a: string, b: string): number {
  const parts = (version: string) => version.split(/[-+]/)[0]!.split('.').map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) {
    if (x[i] !== y[i]) return x[i]! - y[i]!;
  }
  return 0;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
