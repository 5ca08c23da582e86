/**
 * The Leases of a sharded election on the Kubernetes API server: `LeaseLock`s by name, and one
 * LIST of the namespace's Leases for the coordinator. RBAC: `get`, `create`, `update` on
 * `leases` (as every election) plus `list` for the coordinator.
 */

import type { CoordinationV1Api, KubeConfig } from '@kubernetes/client-node';
import { LEASE_RESOURCE } from '../errors.messages.js';
import { classifyKubernetesApiError } from '../kubernetes/api-errors.js';
import { loadClientNode } from '../kubernetes/client-node.loader.js';
import { withSharedConnection } from '../kubernetes/connection-pool.js';
import { validateKubeConfig } from '../kubernetes/kube-config.loader.js';
import { validateNamespace } from '../kubernetes/names.js';
import {
  kubernetesRequestOptions,
  validateRequestTimeoutMs,
} from '../kubernetes/request-options.js';
import { DEFAULT_LEASE_REQUEST_TIMEOUT_MS } from '../locks/kubernetes-object/kubernetes-object.lock.js';
import { LeaseLock } from '../locks/kubernetes-object/lease.lock.js';
import { watchLease } from '../locks/kubernetes-object/lease.watcher.js';
import type { VersionedLeaseRecord } from '../locks/resource-lock.js';
import type { ListedLease, ShardLeaseStore } from './shard-lease-store.js';

/** Options of {@link KubernetesShardLeaseStore}. */
export interface KubernetesShardLeaseStoreOptions {
  /** A loaded `KubeConfig` with a current cluster, or the path of a kubeconfig file. */
  kubeConfig: KubeConfig | string;
  /** The namespace of every Lease of the election. */
  namespace: string;
  /** Upper bound of one request in ms; default 10 000. */
  requestTimeoutMs?: number;
  /** The member's identity, only to name it in error messages. */
  identity?: string;
}

const NOTHING = (): undefined => undefined;

/** Most Leases one listing takes in (a namespace with more is listed in part: the first ones). */
const MAX_LISTED_LEASES = 10_000;

/** See the file's description. */
export class KubernetesShardLeaseStore implements ShardLeaseStore {
  readonly description: string;
  private readonly options: KubernetesShardLeaseStoreOptions;
  private readonly namespace: string;
  private readonly kubeConfig: KubeConfig;
  private readonly requestTimeoutMs: number;
  private readonly locks = new Map<string, LeaseLock>();
  private api: CoordinationV1Api | undefined;

  /**
   * @throws InvalidLeaderElectionOptionError if the namespace, `requestTimeoutMs` or
   *   `kubeConfig` is invalid.
   */
  constructor(options: KubernetesShardLeaseStoreOptions) {
    this.options = options;
    this.namespace = validateNamespace(options.namespace, 'namespace');
    this.kubeConfig = validateKubeConfig(options.kubeConfig, 'kubeConfig');
    this.requestTimeoutMs = validateRequestTimeoutMs(
      options.requestTimeoutMs,
      DEFAULT_LEASE_REQUEST_TIMEOUT_MS,
    );
    this.description = `Leases in namespace ${this.namespace}`;
  }

  /** The `LeaseLock` of `name` in the namespace (one per name). */
  lease(name: string): LeaseLock {
    let lock = this.locks.get(name);
    if (!lock) {
      lock = new LeaseLock({
        kubeConfig: this.kubeConfig,
        name,
        namespace: this.namespace,
        requestTimeoutMs: this.requestTimeoutMs,
        identity: this.options.identity,
      });
      this.locks.set(name, lock);
    }
    return lock;
  }

  /**
   * LISTs the namespace's Leases and keeps those named `prefix…` (each also becomes the object
   * its `LeaseLock` writes over).
   * @throws KubernetesApiError (verb `list`) when the request fails.
   */
  async list(prefix: string, signal: AbortSignal): Promise<ListedLease[]> {
    this.api ??= withSharedConnection(this.kubeConfig).makeApiClient(
      loadClientNode().CoordinationV1Api,
    );
    const request = kubernetesRequestOptions(this.requestTimeoutMs, signal);
    let items;
    try {
      ({ items } = await this.api.listNamespacedLease(
        { namespace: this.namespace },
        request.options,
      ));
    } catch (error) {
      throw classifyKubernetesApiError(
        {
          verb: 'list',
          resource: LEASE_RESOURCE,
          name: `${prefix}*`,
          namespace: this.namespace,
          identity: this.options.identity,
          sent: request.sent(),
        },
        error,
        signal,
      );
    }
    const listed: ListedLease[] = [];
    for (const lease of items.slice(0, MAX_LISTED_LEASES)) {
      const name = lease.metadata?.name;
      if (typeof name !== 'string' || !name.startsWith(prefix)) continue;
      listed.push({ name, current: this.lease(name).adopt(lease) });
    }
    return listed;
  }

  /**
   * Watches every Lease of the namespace (RBAC `watch` on `leases`) and reports those named
   * `prefix…` as they change (each also becomes the object its `LeaseLock` writes over).
   * Deletions are not reported (the coordinator's periodic listing sees them). Reconnects by
   * itself, resuming from the last version seen; never throws.
   */
  watch(
    prefix: string,
    listener: (name: string, current: VersionedLeaseRecord | undefined) => void,
    signal: AbortSignal,
  ): void {
    const { ApiException } = loadClientNode();
    watchLease(
      {
        kubeConfig: withSharedConnection(this.kubeConfig),
        name: prefix,
        namespace: this.namespace,
        everyLease: true,
        lastVersion: NOTHING,
        remember: (lease) => {
          const name = lease.metadata?.name;
          if (typeof name !== 'string' || !name.startsWith(prefix)) {
            return {
              record: { holderIdentity: '', leaseDurationSeconds: 0, leaseTransitions: 0 },
              version: '',
            };
          }
          const current = this.lease(name).adopt(lease);
          listener(name, current);
          return current;
        },
        watchError: (statusCode, cause) =>
          classifyKubernetesApiError(
            {
              verb: 'watch',
              resource: LEASE_RESOURCE,
              name: `${prefix}*`,
              namespace: this.namespace,
              identity: this.options.identity,
              sent: true,
            },
            statusCode === undefined
              ? cause
              : new ApiException(statusCode, String(cause), undefined, {}),
          ),
      },
      {
        onRecord: NOTHING,
        onConnected: NOTHING,
        onDisconnected: NOTHING,
        onUnavailable: NOTHING,
      },
      signal,
    );
  }
}
