import type { CoreV1Api, V1ConfigMap } from '@kubernetes/client-node';
import { LockConflictError } from '../../errors.js';
import { CONFIGMAP_RESOURCE, lockMessages } from '../lock.messages.js';
import { loadClientNode } from '../../kubernetes/client-node.loader.js';
import {
  type KubernetesObjectApi,
  KubernetesObjectLock,
  type KubernetesObjectLockOptions,
} from './kubernetes-object.lock.js';
import {
  formatLeaderAnnotation,
  LEADER_ANNOTATION,
  parseLeaderAnnotation,
} from './leader-annotation.record.js';
import type { LeaseRecord } from '../resource-lock.js';

/** Options of {@link ConfigMapLock}: the ConfigMap's `name` and `namespace`, the kubeconfig. */
export interface ConfigMapLockOptions extends KubernetesObjectLockOptions {
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
export class ConfigMapLock extends KubernetesObjectLock<V1ConfigMap> {
  protected readonly api: KubernetesObjectApi<V1ConfigMap>;
  private readonly onUnreadableRecord: (message: string) => void;
  private warnedUnreadable = false;

  /**
   * @throws InvalidLeaderElectionOptionError if the name or namespace is invalid, or
   *   `kubeConfig` is not usable or has no current cluster.
   */
  constructor(opts: ConfigMapLockOptions) {
    super('ConfigMap', CONFIGMAP_RESOURCE, opts);
    this.onUnreadableRecord =
      opts.onUnreadableRecord ?? ((message) => console.warn(`[nest-leader] ${message}`));
    const api: CoreV1Api = this.pooledKubeConfig.makeApiClient(loadClientNode().CoreV1Api);
    this.api = {
      read: (name, namespace, options) => api.readNamespacedConfigMap({ name, namespace }, options),
      create: (namespace, body, options) =>
        api.createNamespacedConfigMap({ namespace, body }, options),
      replace: (name, namespace, body, options) =>
        api.replaceNamespacedConfigMap({ name, namespace, body }, options),
    };
  }

  /** The annotation's record; warns once when it is unreadable (see the class comment). */
  protected toRecord(configMap: V1ConfigMap): LeaseRecord {
    const parsed = parseLeaderAnnotation(configMap.metadata?.annotations?.[LEADER_ANNOTATION]);
    if (!parsed.ok && !this.warnedUnreadable) {
      this.warnedUnreadable = true;
      this.onUnreadableRecord(
        lockMessages.unreadableLeaderAnnotation(this.description, parsed.reason),
      );
    } else if (parsed.ok) {
      this.warnedUnreadable = false;
    }
    return parsed.record;
  }

  /** A ConfigMap holding only the annotation. */
  protected newObject(record: LeaseRecord): V1ConfigMap {
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: this.name,
        namespace: this.namespace,
        annotations: { [LEADER_ANNOTATION]: formatLeaderAnnotation(record) },
      },
    };
  }

  /**
   * The ConfigMap last read with the annotation replaced: data, labels, other annotations and
   * owner references are sent back as read.
   * @throws LockConflictError when `version` is not the version this lock last read or wrote
   *   (it never PUTs an object it has not seen: that would drop its data).
   */
  protected updatedObject(
    record: LeaseRecord,
    version: string,
    last: V1ConfigMap | undefined,
  ): V1ConfigMap {
    if (!last?.metadata) throw new LockConflictError(this.description, 'update');
    return {
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
  }
}
