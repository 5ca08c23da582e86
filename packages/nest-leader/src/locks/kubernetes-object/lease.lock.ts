import type {
  CoordinationV1Api,
  V1Lease,
  V1MicroTime,
  V1ObjectMeta,
} from '@kubernetes/client-node';
import { LEASE_RESOURCE } from '../../errors.messages.js';
import { errorText } from '../../format.js';
import { loadClientNode } from '../../kubernetes/client-node.loader.js';
import {
  type KubernetesObjectApi,
  KubernetesObjectLock,
  type KubernetesObjectLockOptions,
} from './kubernetes-object.lock.js';
import { type LeaseWatchOptions, watchLease } from './lease.watcher.js';
import { toMicroTime } from '../../kubernetes/micro-time.js';
import {
  type LeaseRecord,
  parseLeaseRecord,
  parseLeaseTime,
  type VersionedLeaseRecord,
} from '../resource-lock.js';
import { formatAdvertisedCandidates } from '../advertised-candidates.js';
import type { LockWatch, LockWatchListener, WatchableLock } from '../watchable-lock.js';

/** Options of {@link LeaseLock}: the Lease's `name` and `namespace`, and the kubeconfig. */
export type LeaseLockOptions = KubernetesObjectLockOptions;

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
export class LeaseLock extends KubernetesObjectLock<V1Lease> implements WatchableLock {
  protected readonly api: KubernetesObjectApi<V1Lease>;
  /**
   * Advertisements are stored in the annotation {@link CANDIDATES_ANNOTATION}, and a write
   * that changes only annotations leaves `spec` exactly as read (times to the microsecond).
   */
  readonly storesCandidates = true;

  /**
   * @throws InvalidLeaderElectionOptionError if the name or namespace is invalid, or
   *   `kubeConfig` is neither a `KubeConfig` nor the path of a usable kubeconfig, or has no
   *   current cluster.
   */
  constructor(opts: LeaseLockOptions) {
    super('Lease', LEASE_RESOURCE, opts);
    const api: CoordinationV1Api = this.pooledKubeConfig.makeApiClient(
      loadClientNode().CoordinationV1Api,
    );
    this.api = {
      read: (name, namespace, options) => api.readNamespacedLease({ name, namespace }, options),
      create: (namespace, body, options) => api.createNamespacedLease({ namespace, body }, options),
      replace: (name, namespace, body, options) =>
        api.replaceNamespacedLease({ name, namespace, body }, options),
    };
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
        kubeConfig: this.pooledKubeConfig,
        name: this.name,
        namespace: this.namespace,
        timeoutSeconds: options.timeoutSeconds,
        lastVersion: () => options.fromVersion ?? this.last?.metadata?.resourceVersion,
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

  /**
   * Takes a Lease of this name read by another request (a LIST of the namespace) as the one last
   * read: `update` writes over it. Returns its record and version.
   */
  adopt(lease: V1Lease): VersionedLeaseRecord {
    return this.remember(lease);
  }

  /** A record from any Lease, including one without `spec` or with nonsense in it. */
  protected toRecord(lease: V1Lease): LeaseRecord {
    const annotations = lease.metadata?.annotations;
    const scheduleLedger = annotations?.[SCHEDULE_LEDGER_ANNOTATION];
    const handoff = annotations?.[HANDOFF_ANNOTATION];
    const candidates = annotations?.[CANDIDATES_ANNOTATION];
    const templateBackoff = annotations?.[TEMPLATE_BACKOFF_ANNOTATION];
    const handoffOffer = annotations?.[HANDOFF_OFFER_ANNOTATION];
    const shards = annotations?.[SHARDS_ANNOTATION];
    return parseLeaseRecord({
      ...lease.spec,
      scheduleLedger,
      handoff,
      candidates,
      templateBackoff,
      handoffOffer,
      shards,
    });
  }

  protected newObject(record: LeaseRecord): V1Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: withScheduleLedger({ name: this.name, namespace: this.namespace }, record),
      spec: toLeaseSpec(record),
    };
  }

  /** The Lease last read with the new spec (its labels, annotations, owners kept), or a bare one. */
  protected updatedObject(
    record: LeaseRecord,
    version: string,
    last: V1Lease | undefined,
  ): V1Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: withScheduleLedger(
        {
          ...(last?.metadata ?? { name: this.name, namespace: this.namespace }),
          resourceVersion: version,
        },
        record,
      ),
      spec: toLeaseSpec(record, last?.spec),
    };
  }
}

/**
 * The annotation of the election's Lease that holds the schedule ledger of its leader-only
 * jobs (see `LeaseRecord.scheduleLedger`). client-go candidates on the same Lease write back
 * the annotations they read, so the ledger survives their terms unchanged.
 */
export const SCHEDULE_LEDGER_ANNOTATION = 'nest-leader/schedule-ledger';

/**
 * The annotation of the election's Lease that marks a handoff (see `LeaseRecord.handoff`), as
 * JSON `{"to":"<identity>","leaseTransitions":<n>}`. client-go candidates ignore it and write it
 * back; nest-leader trusts it only while `leaseTransitions` and the holder still match.
 */
export const HANDOFF_ANNOTATION = 'nest-leader/handoff';

/**
 * The annotation of the election's Lease that holds what its candidates advertise (see
 * `LeaseRecord.candidates`), as a JSON array of
 * `{"identity","podTemplateHash","priority","startedAt"}`. client-go candidates ignore it and
 * write it back unchanged.
 */
export const CANDIDATES_ANNOTATION = 'nest-leader/candidates';

/**
 * The annotation of the election's Lease that holds the newest pod template leaders do not
 * yield to for a while (see `LeaseRecord.templateBackoff`), as JSON
 * `{"podTemplateHash":"<hash>","failures":<n>}`. client-go candidates ignore it and write it
 * back unchanged.
 */
export const TEMPLATE_BACKOFF_ANNOTATION = 'nest-leader/template-backoff';

/**
 * The annotation of the election's Lease that holds an open handoff offer and its acceptance
 * (see `LeaseRecord.handoffOffer`), as JSON
 * `{"to":"<identity>","from":"<holder>","leaseTransitions":<n>,"accepted":true?}`. client-go
 * candidates ignore it and write it back; nest-leader trusts it only while the holder and
 * `leaseTransitions` still match.
 */
export const HANDOFF_OFFER_ANNOTATION = 'nest-leader/handoff-offer';

/**
 * The annotation of a sharded election's Leases (see `LeaseRecord.shards`): on the assignment
 * Lease the shard assignment, on a member Lease the member's acknowledgement. Written only by
 * nest-leader; bounded and validated when read.
 */
export const SHARDS_ANNOTATION = 'nest-leader/shards';

/**
 * `metadata` with the record's ledger, handoff marker, candidates, template backoff and handoff
 * offer as annotations (a record without a marker, candidates, backoff or offer removes that
 * annotation); other annotations are kept.
 */
function withScheduleLedger(metadata: V1ObjectMeta, record: LeaseRecord): V1ObjectMeta {
  const annotations = { ...metadata.annotations };
  if (record.scheduleLedger !== undefined) {
    annotations[SCHEDULE_LEDGER_ANNOTATION] = record.scheduleLedger;
  }
  if (record.handoff !== undefined) {
    annotations[HANDOFF_ANNOTATION] = JSON.stringify(record.handoff);
  } else {
    delete annotations[HANDOFF_ANNOTATION];
  }
  if (record.candidates !== undefined && record.candidates.length > 0) {
    annotations[CANDIDATES_ANNOTATION] = formatAdvertisedCandidates(record.candidates);
  } else {
    delete annotations[CANDIDATES_ANNOTATION];
  }
  if (record.templateBackoff !== undefined) {
    annotations[TEMPLATE_BACKOFF_ANNOTATION] = JSON.stringify(record.templateBackoff);
  } else {
    delete annotations[TEMPLATE_BACKOFF_ANNOTATION];
  }
  if (record.handoffOffer !== undefined) {
    annotations[HANDOFF_OFFER_ANNOTATION] = JSON.stringify(record.handoffOffer);
  } else {
    delete annotations[HANDOFF_OFFER_ANNOTATION];
  }
  if (record.shards !== undefined) annotations[SHARDS_ANNOTATION] = record.shards;
  if (Object.keys(annotations).length === 0 && metadata.annotations === undefined) return metadata;
  return { ...metadata, annotations };
}

/**
 * The Lease spec of `record`. A time equal (to the millisecond a `Date` holds) to the one in
 * `last`, the spec read, is written back as read, microseconds included: a write by a
 * candidate that only changes annotations must not look like a renewal to client-go, which
 * compares the whole record, times included.
 */
function toLeaseSpec(record: LeaseRecord, last?: V1Lease['spec']): V1Lease['spec'] {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
    acquireTime: specTime(record.acquireTime, last?.acquireTime),
    renewTime: specTime(record.renewTime, last?.renewTime),
    strategy: record.strategy,
    preferredHolder: record.preferredHolder,
  };
}

/** `time` as MicroTime; `read` (as client-node delivered it, a string) when it is the same time. */
function specTime(time: Date | undefined, read: unknown): V1MicroTime | undefined {
  if (time === undefined) return undefined;
  if (read !== undefined && parseLeaseTime(read)?.getTime() === time.getTime()) {
    return read as V1MicroTime;
  }
  return toMicroTime(time);
}
