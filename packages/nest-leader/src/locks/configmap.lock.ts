import type { CoreV1Api, KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError, LockConflictError } from '../errors.js';
import { CONFIGMAP_RESOURCE, lockMessages } from '../messages.js';
import { loadClientNode } from './client-node.loader.js';
import { validateKubeConfig } from './kube-config.loader.js';
import { classifyKubernetesApiError } from './kubernetes-api-errors.js';
import { type KubernetesRequestOptions, kubernetesRequestOptions } from './kubernetes-request.js';
import { validateLeaseName, validateNamespace } from './kubernetes-names.js';
import {
  formatLeaderAnnotation,
  LEADER_ANNOTATION,
  parseLeaderAnnotation,
} from './leader-annotation.record.js';
import { DEFAULT_LEASE_REQUEST_TIMEOUT_MS } from './lease.lock.js';
import type {
  LeaseRecord,
  LockOperation,
  ResourceLock,
  VersionedLeaseRecord,
} from './resource-lock.js';

/** Options of {@link ConfigMapLock}. */
export interface ConfigMapLockOptions {
  /** A loaded `KubeConfig` with a current cluster, or the path of a kubeconfig file. */
  kubeConfig: KubeConfig | string;
  /** ConfigMap name: a DNS-1123 subdomain. */
  name: string;
  /** ConfigMap namespace: a DNS-1123 label. */
  namespace: string;
  /** Upper bound of one request in ms (the elector passes shorter deadlines); default 10 000. */
  requestTimeoutMs?: number;
  /** The candidate's identity, only to name it in error messages. */
  identity?: string;
  /**
   * Called once when the annotation holds something that is not a JSON object (and again only
   * after a readable record was seen in between). Default: `console.warn`.
   */
  onUnreadableRecord?: (message: string) => void;
}

/**
 * The election record in a ConfigMap's `control-plane.alpha.kubernetes.io/leader`
 * annotation, as client-go's historical `ConfigMapLock` (removed in client-go 1.24): for
 * fleets that still elect on a ConfigMap (old client-go, the Python client, fabric8). Prefer
 * `LeaseLock` for anything new. Needs RBAC verbs `get`, `create`, `update` on `configmaps`.
 *
 * Same semantics as `LeaseLock`: `update` PUTs the whole ConfigMap last read with its
 * `resourceVersion` (409 → `LockConflictError`), so its `data`, labels and other annotations
 * are kept; errors are classified by `classifyKubernetesApiError` (a `KubernetesApiError` for
 * `configmaps`). A ConfigMap without the annotation reads as a free record. The record's
 * `leaderTransitions` is this library's `leaseTransitions`.
 *
 * Records written by other implementations are read leniently (see `parseLeaderAnnotation`);
 * one that is not a JSON object reads as held by `(unreadable leader annotation)` with no
 * duration, so the elector waits its own leaseDuration from the last change it observed before
 * taking over — never takes it as free — and a warning says so once.
 */
export class ConfigMapLock implements ResourceLock {
  /** `ConfigMap <namespace>/<name>`. */
  readonly description: string;
  /** The ConfigMap's name. */
  readonly name: string;
  /** The ConfigMap's namespace. */
  readonly namespace: string;
  private readonly api: CoreV1Api;
  private readonly requestTimeoutMs: number;
  private readonly identity: string | undefined;
  private readonly execPlugin: boolean;
  private readonly onUnreadableRecord: (message: string) => void;
  private warnedUnreadable = false;
  /** The object last read or written, PUT back on update to keep its data and metadata. */
  private configMap: V1ConfigMap | undefined;

  /**
   * @throws InvalidLeaderElectionOptionError if the name or namespace is invalid, or
   *   `kubeConfig` is not usable or has no current cluster.
   */
  constructor(opts: ConfigMapLockOptions) {
    this.name = validateLeaseName(opts.name, 'name');
    this.namespace = validateNamespace(opts.namespace, 'namespace');
    this.description = `ConfigMap ${this.namespace}/${this.name}`;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_LEASE_REQUEST_TIMEOUT_MS;
    if (!(this.requestTimeoutMs > 0)) {
      throw new InvalidLeaderElectionOptionError(
        'requestTimeoutMs',
        'must be a positive number of milliseconds',
        opts.requestTimeoutMs,
      );
    }
    this.identity = opts.identity;
    this.onUnreadableRecord =
      opts.onUnreadableRecord ?? ((message) => console.warn(`[nest-leader] ${message}`));
    const kubeConfig = validateKubeConfig(opts.kubeConfig, 'kubeConfig');
    if (!kubeConfig.getCurrentCluster()) {
      throw new InvalidLeaderElectionOptionError('kubeConfig', lockMessages.noCluster(), undefined);
    }
    this.execPlugin = Boolean(kubeConfig.getCurrentUser()?.exec);
    this.api = kubeConfig.makeApiClient(loadClientNode().CoreV1Api);
  }

  /**
   * GETs the ConfigMap; resolves `undefined` on 404. The version is its `resourceVersion`.
   * @throws KubernetesApiError for any other failure.
   */
  async get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    const request = this.request(signal);
    try {
      const configMap = await this.api.readNamespacedConfigMap(
        { name: this.name, namespace: this.namespace },
        request.options,
      );
      return this.remember(configMap);
    } catch (error) {
      if (error instanceof loadClientNode().ApiException && error.code === 404) return undefined;
      throw this.classify('get', error, signal, request.sent());
    }
  }

  /**
   * POSTs a new ConfigMap holding only the annotation; resolves its `resourceVersion`.
   * @throws LockConflictError on 409 AlreadyExists; KubernetesApiError for other failures.
   */
  async create(record: LeaseRecord, signal?: AbortSignal): Promise<string> {
    const body: V1ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: this.name,
        namespace: this.namespace,
        annotations: { [LEADER_ANNOTATION]: formatLeaderAnnotation(record) },
      },
    };
    const request = this.request(signal);
    try {
      const configMap = await this.api.createNamespacedConfigMap(
        { namespace: this.namespace, body },
        request.options,
      );
      return this.remember(configMap).version;
    } catch (error) {
      throw this.classify('create', error, signal, request.sent());
    }
  }

  /**
   * PUTs the ConfigMap last read, with the annotation replaced and `resourceVersion = version`;
   * resolves the new version. Only the annotation changes: data, labels, other annotations and
   * owner references are sent back as read.
   * @throws LockConflictError on 409 Conflict, or when `version` is not the version this lock
   *   last read or wrote (it never PUTs an object it has not seen: that would drop its data);
   *   KubernetesApiError otherwise.
   */
  async update(record: LeaseRecord, version: string, signal?: AbortSignal): Promise<string> {
    const last = this.configMap;
    if (last?.metadata?.resourceVersion !== version) {
      throw new LockConflictError(this.description, 'update');
    }
    const body: V1ConfigMap = {
      ...last,
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        ...last.metadata,
        annotations: {
          ...last.metadata.annotations,
          [LEADER_ANNOTATION]: formatLeaderAnnotation(record),
        },
        resourceVersion: version,
      },
    };
    const request = this.request(signal);
    try {
      const configMap = await this.api.replaceNamespacedConfigMap(
        { name: this.name, namespace: this.namespace, body },
        request.options,
      );
      return this.remember(configMap).version;
    } catch (error) {
      throw this.classify('update', error, signal, request.sent());
    }
  }

  private remember(configMap: V1ConfigMap): VersionedLeaseRecord {
    this.configMap = configMap;
    const parsed = parseLeaderAnnotation(configMap.metadata?.annotations?.[LEADER_ANNOTATION]);
    if (!parsed.ok && !this.warnedUnreadable) {
      this.warnedUnreadable = true;
      this.onUnreadableRecord(
        lockMessages.unreadableLeaderAnnotation(this.description, parsed.reason),
      );
    } else if (parsed.ok) {
      this.warnedUnreadable = false;
    }
    return { record: parsed.record, version: configMap.metadata?.resourceVersion ?? '' };
  }

  private request(signal: AbortSignal | undefined): KubernetesRequestOptions {
    return kubernetesRequestOptions(this.requestTimeoutMs, signal);
  }

  private classify(
    verb: LockOperation,
    error: unknown,
    signal: AbortSignal | undefined,
    sent: boolean,
  ): Error {
    return classifyKubernetesApiError(
      {
        verb,
        resource: CONFIGMAP_RESOURCE,
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
