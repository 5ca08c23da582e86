import type { CoordinationV1Api, KubeConfig, V1Lease } from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError } from '../errors.js';
import { errorText, LEASE_RESOURCE, lockMessages } from '../messages.js';
import { loadClientNode } from './client-node.loader.js';
import { validateKubeConfig } from './kube-config.loader.js';
import { classifyKubernetesApiError } from './kubernetes-api-errors.js';
import { type KubernetesRequestOptions, kubernetesRequestOptions } from './kubernetes-request.js';
import { validateLeaseName, validateNamespace } from './kubernetes-names.js';
import { type LeaseWatchOptions, watchLease } from './lease.watcher.js';
import { toMicroTime } from './micro-time.js';
import {
  type LeaseRecord,
  type LockOperation,
  parseLeaseRecord,
  type VersionedLeaseRecord,
} from './resource-lock.js';
import type { LockWatch, LockWatchListener, WatchableLock } from './watchable-lock.js';

/** Default timeout of one API request when the caller's signal does not end it sooner. */
export const DEFAULT_LEASE_REQUEST_TIMEOUT_MS = 10_000;

/** Options of {@link LeaseLock}. */
export interface LeaseLockOptions {
  /**
   * A loaded `KubeConfig` (`loadFromFile()`, `loadFromCluster()`, …) with a current cluster,
   * or the path of a kubeconfig file to load.
   */
  kubeConfig: KubeConfig | string;
  /** Lease name: a DNS-1123 subdomain. */
  name: string;
  /** Lease namespace: a DNS-1123 label; see `resolveNamespace()`. */
  namespace: string;
  /** Upper bound of one request in ms (the elector passes shorter deadlines); default 10 000. */
  requestTimeoutMs?: number;
  /** The candidate's identity, only to name it in error messages. */
  identity?: string;
}

/**
 * A `coordination.k8s.io/v1` Lease as the election record, as client-go's `LeaseLock`.
 * Needs RBAC verbs `get`, `create`, `update` on `leases` in the namespace, and `watch` for
 * {@link LeaseLock.watch} (all but `create` can be restricted to the Lease by `resourceNames`).
 *
 * `update` PUTs the whole object last read (labels, annotations and owner references are
 * kept) with its `resourceVersion`, so the API server rejects stale writes (409 →
 * `LockConflictError`). Times are written as MicroTime with six fractional digits. A Lease
 * without `spec` reads as a free record with zero duration.
 *
 * Errors: `get` of a missing Lease resolves `undefined`; other failures reject with
 * `LeaseApiError` (`kind` says whether it is RBAC, credentials, kubeconfig configuration,
 * invalid, transient or a timeout; see `classifyKubernetesApiError`) or `LockConflictError`.
 *
 * `@kubernetes/client-node` is loaded when the first `LeaseLock` is constructed, not when
 * nest-leader is imported.
 */
export class LeaseLock implements WatchableLock {
  /** `Lease <namespace>/<name>`. */
  readonly description: string;
  /** The Lease's name. */
  readonly name: string;
  /** The Lease's namespace. */
  readonly namespace: string;
  /** The loaded kubeconfig its requests use (observers write Events and pod labels with it). */
  readonly kubeConfig: KubeConfig;
  private readonly api: CoordinationV1Api;
  private readonly requestTimeoutMs: number;
  private readonly identity: string | undefined;
  private readonly execPlugin: boolean;
  /** The object last read or written, PUT back on update to keep its metadata. */
  private lease: V1Lease | undefined;

  /**
   * @throws InvalidLeaderElectionOptionError if the name or namespace is invalid, or
   *   `kubeConfig` is neither a `KubeConfig` nor the path of a usable kubeconfig, or has no
   *   current cluster.
   */
  constructor(opts: LeaseLockOptions) {
    this.name = validateLeaseName(opts.name, 'name');
    this.namespace = validateNamespace(opts.namespace, 'namespace');
    this.description = `Lease ${this.namespace}/${this.name}`;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_LEASE_REQUEST_TIMEOUT_MS;
    if (!(this.requestTimeoutMs > 0)) {
      throw new InvalidLeaderElectionOptionError(
        'requestTimeoutMs',
        'must be a positive number of milliseconds',
        opts.requestTimeoutMs,
      );
    }
    this.identity = opts.identity;
    const kubeConfig = validateKubeConfig(opts.kubeConfig, 'kubeConfig');
    this.kubeConfig = kubeConfig;
    if (!kubeConfig.getCurrentCluster()) {
      throw new InvalidLeaderElectionOptionError('kubeConfig', lockMessages.noCluster(), undefined);
    }
    this.execPlugin = Boolean(kubeConfig.getCurrentUser()?.exec);
    this.api = kubeConfig.makeApiClient(loadClientNode().CoordinationV1Api);
  }

  /**
   * GETs the Lease; resolves `undefined` on 404. The version is its `resourceVersion`.
   * @throws LeaseApiError for any other failure.
   */
  async get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    const request = this.request(signal);
    try {
      const lease = await this.api.readNamespacedLease(
        { name: this.name, namespace: this.namespace },
        request.options,
      );
      return this.remember(lease);
    } catch (error) {
      if (error instanceof loadClientNode().ApiException && error.code === 404) return undefined;
      throw this.classify('get', error, signal, request.sent());
    }
  }

  /**
   * POSTs a new Lease; resolves its `resourceVersion`.
   * @throws LockConflictError on 409 AlreadyExists; LeaseApiError for other failures.
   */
  async create(record: LeaseRecord, signal?: AbortSignal): Promise<string> {
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace },
      spec: toLeaseSpec(record),
    };
    const request = this.request(signal);
    try {
      const lease = await this.api.createNamespacedLease(
        { namespace: this.namespace, body },
        request.options,
      );
      return this.remember(lease).version;
    } catch (error) {
      throw this.classify('create', error, signal, request.sent());
    }
  }

  /**
   * PUTs the Lease with `metadata.resourceVersion = version`; resolves the new one.
   * @throws LockConflictError on 409 Conflict (stale version); LeaseApiError otherwise.
   */
  async update(record: LeaseRecord, version: string, signal?: AbortSignal): Promise<string> {
    const last = this.lease?.metadata?.resourceVersion === version ? this.lease : undefined;
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        ...(last?.metadata ?? { name: this.name, namespace: this.namespace }),
        resourceVersion: version,
      },
      spec: toLeaseSpec(record),
    };
    const request = this.request(signal);
    try {
      const lease = await this.api.replaceNamespacedLease(
        { name: this.name, namespace: this.namespace, body },
        request.options,
      );
      return this.remember(lease).version;
    } catch (error) {
      throw this.classify('update', error, signal, request.sent());
    }
  }

  /**
   * Watches the Lease by name (`fieldSelector=metadata.name=<name>`, needs RBAC `watch`),
   * resuming from the last resourceVersion seen, reconnecting when the watch ends, re-reading
   * on 410 Gone; every object it delivers also becomes the one `update` writes back. A 403
   * ends it with {@link LockWatchListener.onUnavailable} (a `LeaseApiError` for verb `watch`).
   * @param options - for tests and diagnostics: `fromVersion` to start from (default the last
   *   version this lock saw), `timeoutSeconds` after which the server ends each watch (default
   *   a random 300–600 s, as client-go's reflectors).
   */
  watch(
    listener: LockWatchListener,
    signal: AbortSignal,
    options: LeaseWatchOptions = {},
  ): LockWatch {
    return watchLease(
      {
        kubeConfig: this.kubeConfig,
        name: this.name,
        namespace: this.namespace,
        timeoutSeconds: options.timeoutSeconds,
        lastVersion: () => options.fromVersion ?? this.lease?.metadata?.resourceVersion,
        remember: (lease) => this.remember(lease),
        watchError: (statusCode, cause) => {
          const { ApiException } = loadClientNode();
          const error =
            statusCode === undefined
              ? cause
              : new ApiException(statusCode, errorText(cause), undefined, {});
          return this.classify('watch', error, undefined, true);
        },
      },
      listener,
      signal,
    );
  }

  private remember(lease: V1Lease): VersionedLeaseRecord {
    this.lease = lease;
    return { record: fromLeaseSpec(lease), version: lease.metadata?.resourceVersion ?? '' };
  }

  /** Options passing the caller's signal, bounded by `requestTimeoutMs`, to the request. */
  private request(signal: AbortSignal | undefined): KubernetesRequestOptions {
    return kubernetesRequestOptions(this.requestTimeoutMs, signal);
  }

  private classify(
    verb: LockOperation | 'watch',
    error: unknown,
    signal: AbortSignal | undefined,
    sent: boolean,
  ): Error {
    return classifyKubernetesApiError(
      {
        verb,
        resource: LEASE_RESOURCE,
        name: this.name,
        namespace: this.namespace,
        identity: this.identity,
        lock: this.description,
        sent,
        execPlugin: this.execPlugin,
      },
      error,
      signal,
    );
  }
}

function toLeaseSpec(record: LeaseRecord): V1Lease['spec'] {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
    acquireTime: record.acquireTime && toMicroTime(record.acquireTime),
    renewTime: record.renewTime && toMicroTime(record.renewTime),
    strategy: record.strategy,
    preferredHolder: record.preferredHolder,
  };
}

/** A record from any Lease, including one without `spec` or with nonsense in it. */
function fromLeaseSpec(lease: V1Lease): LeaseRecord {
  return parseLeaseRecord({ ...lease.spec });
}
