/**
 * What `LeaseLock` and `ConfigMapLock` share: a named, namespaced Kubernetes object holding the
 * election record, read with GET (404 → no record), created with POST and replaced with PUT
 * under its `resourceVersion`, so the API server rejects stale writes. Each subclass says how
 * the record is stored in its object (a codec) and which client-node calls move it.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError } from '../../errors.js';
import { lockMessages } from '../lock.messages.js';
import { loadClientNode } from '../../kubernetes/client-node.loader.js';
import { validateKubeConfig } from '../../kubernetes/kube-config.loader.js';
import { withSharedConnection } from '../../kubernetes/connection-pool.js';
import { classifyKubernetesApiError } from '../../kubernetes/api-errors.js';
import {
  type KubernetesRequestOptions,
  kubernetesRequestOptions,
  validateRequestTimeoutMs,
} from '../../kubernetes/request-options.js';
import { validateLeaseName, validateNamespace } from '../../kubernetes/names.js';
import type {
  LeaseRecord,
  LockOperation,
  ResourceLock,
  VersionedLeaseRecord,
} from '../resource-lock.js';

/** Default timeout of one API request when the caller's signal does not end it sooner. */
export const DEFAULT_LEASE_REQUEST_TIMEOUT_MS = 10_000;

/** Options every Kubernetes object lock takes. */
export interface KubernetesObjectLockOptions {
  /**
   * A loaded `KubeConfig` (`loadFromFile()`, `loadFromCluster()`, …) with a current cluster,
   * or the path of a kubeconfig file to load.
   */
  kubeConfig: KubeConfig | string;
  /** The object's name: a DNS-1123 subdomain. */
  name: string;
  /** The object's namespace: a DNS-1123 label; see `resolveNamespace()`. */
  namespace: string;
  /** Upper bound of one request in ms (the elector passes shorter deadlines); default 10 000. */
  requestTimeoutMs?: number;
  /** The candidate's identity, only to name it in error messages. */
  identity?: string;
}

/** The client-node calls that move one kind of object (each takes the request options last). */
export interface KubernetesObjectApi<T> {
  /** GET the object; rejects with client-node's `ApiException` (404 when it does not exist). */
  read(name: string, namespace: string, options: KubernetesRequestOptions['options']): Promise<T>;
  /** POST `body`; resolves the created object (409 when it already exists). */
  create(namespace: string, body: T, options: KubernetesRequestOptions['options']): Promise<T>;
  /** PUT `body` (with its `metadata.resourceVersion`); resolves the written object (409 when stale). */
  replace(
    name: string,
    namespace: string,
    body: T,
    options: KubernetesRequestOptions['options'],
  ): Promise<T>;
}

/**
 * Base of the locks on a Kubernetes object `T`. Errors: `get` of a missing object resolves
 * `undefined`; other failures reject with a `KubernetesApiError` (`LeaseApiError` for Leases)
 * classified by `classifyKubernetesApiError`, or `LockConflictError` on 409.
 */
export abstract class KubernetesObjectLock<
  T extends { metadata?: { resourceVersion?: string } },
> implements ResourceLock {
  /** `<Kind> <namespace>/<name>`. */
  readonly description: string;
  /** The object's name. */
  readonly name: string;
  /** The object's namespace. */
  readonly namespace: string;
  /** The loaded kubeconfig its requests use (observers write Events and pod labels with it). */
  readonly kubeConfig: KubeConfig;
  /** {@link KubernetesObjectLock.kubeConfig} with one pooled HTTP/1.1 connection (`kubernetes/connection-pool.ts`). */
  protected readonly pooledKubeConfig: KubeConfig;
  private readonly requestTimeoutMs: number;
  private readonly identity: string | undefined;
  private readonly execPlugin: boolean;
  /** The object last read or written: `update` writes it back to keep its other fields. */
  protected last: T | undefined;

  /**
   * @param kind - the object's kind, for the description (`Lease`, `ConfigMap`)
   * @param resource - its API resource, for error messages (`leases`, `configmaps`)
   * @throws InvalidLeaderElectionOptionError if the name or namespace is invalid,
   *   `requestTimeoutMs` is not positive, or `kubeConfig` is neither a `KubeConfig` nor the
   *   path of a usable kubeconfig, or has no current cluster.
   */
  protected constructor(
    kind: string,
    private readonly resource: string,
    opts: KubernetesObjectLockOptions,
  ) {
    this.name = validateLeaseName(opts.name, 'name');
    this.namespace = validateNamespace(opts.namespace, 'namespace');
    this.description = `${kind} ${this.namespace}/${this.name}`;
    this.requestTimeoutMs = validateRequestTimeoutMs(
      opts.requestTimeoutMs,
      DEFAULT_LEASE_REQUEST_TIMEOUT_MS,
    );
    this.identity = opts.identity;
    this.kubeConfig = validateKubeConfig(opts.kubeConfig, 'kubeConfig');
    if (!this.kubeConfig.getCurrentCluster()) {
      throw new InvalidLeaderElectionOptionError('kubeConfig', lockMessages.noCluster(), undefined);
    }
    this.execPlugin = Boolean(this.kubeConfig.getCurrentUser()?.exec);
    this.pooledKubeConfig = withSharedConnection(this.kubeConfig);
  }

  /** The client-node calls for `T` (made once, from `pooledKubeConfig`). */
  protected abstract readonly api: KubernetesObjectApi<T>;
  /** The record stored in `object`; never throws (a foreign or corrupt record reads leniently). */
  protected abstract toRecord(object: T): LeaseRecord;
  /** A new object holding `record`. */
  protected abstract newObject(record: LeaseRecord): T;
  /**
   * The object to PUT: `record` in the object last read (`last`, if its version is `version`).
   * @throws LockConflictError when it cannot write without an object it has not seen.
   */
  protected abstract updatedObject(record: LeaseRecord, version: string, last: T | undefined): T;

  /**
   * GETs the object; resolves `undefined` on 404. The version is its `resourceVersion`.
   * @throws KubernetesApiError for any other failure.
   */
  async get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    const request = this.request(signal);
    try {
      return this.remember(await this.api.read(this.name, this.namespace, request.options));
    } catch (error) {
      if (error instanceof loadClientNode().ApiException && error.code === 404) return undefined;
      throw this.classify('get', error, signal, request.sent());
    }
  }

  /**
   * POSTs a new object holding `record`; resolves its `resourceVersion`.
   * @throws LockConflictError on 409 AlreadyExists; KubernetesApiError for other failures.
   */
  async create(record: LeaseRecord, signal?: AbortSignal): Promise<string> {
    const body = this.newObject(record);
    const request = this.request(signal);
    try {
      return this.remember(await this.api.create(this.namespace, body, request.options)).version;
    } catch (error) {
      throw this.classify('create', error, signal, request.sent());
    }
  }

  /**
   * PUTs the object with `record` and `metadata.resourceVersion = version`; resolves the new
   * version.
   * @throws LockConflictError on 409 Conflict (stale version); KubernetesApiError otherwise.
   */
  async update(record: LeaseRecord, version: string, signal?: AbortSignal): Promise<string> {
    const last = this.last?.metadata?.resourceVersion === version ? this.last : undefined;
    const body = this.updatedObject(record, version, last);
    const request = this.request(signal);
    try {
      const written = await this.api.replace(this.name, this.namespace, body, request.options);
      return this.remember(written).version;
    } catch (error) {
      throw this.classify('update', error, signal, request.sent());
    }
  }

  /** Keeps `object` as the one `update` writes back; returns its record and version. */
  protected remember(object: T): VersionedLeaseRecord {
    this.last = object;
    return { record: this.toRecord(object), version: object.metadata?.resourceVersion ?? '' };
  }

  /** Options passing the caller's signal, bounded by `requestTimeoutMs`, to the request. */
  private request(signal: AbortSignal | undefined): KubernetesRequestOptions {
    return kubernetesRequestOptions(this.requestTimeoutMs, signal);
  }

  /** The classified error for a failed request (see `classifyKubernetesApiError`). */
  protected classify(
    verb: LockOperation | 'watch',
    error: unknown,
    signal: AbortSignal | undefined,
    sent: boolean,
  ): Error {
    return classifyKubernetesApiError(
      {
        verb,
        resource: this.resource,
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
