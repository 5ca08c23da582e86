import {
  ApiException,
  CoordinationV1Api,
  type ConfigurationOptions,
  type KubeConfig,
  Observable,
  type V1Lease,
} from '@kubernetes/client-node';
import {
  InvalidLeaderElectionOptionError,
  LeaseApiError,
  type LeaseApiErrorKind,
  LockConflictError,
} from '../errors.js';
import { lockMessages } from '../messages.js';
import { validateLeaseName, validateNamespace } from './kubernetes-names.js';
import { toMicroTime } from './micro-time.js';
import {
  type LeaseRecord,
  parseLeaseRecord,
  type ResourceLock,
  type VersionedLeaseRecord,
} from './resource-lock.js';

/** Default timeout of one API request when the caller's signal does not end it sooner. */
export const DEFAULT_LEASE_REQUEST_TIMEOUT_MS = 10_000;

/** Options of {@link LeaseLock}. */
export interface LeaseLockOptions {
  /** A loaded kubeconfig (`loadFromDefault()`, `loadFromCluster()`, …) with a current cluster. */
  kubeConfig: KubeConfig;
  /** Lease name: a DNS-1123 subdomain. */
  name: string;
  /** Lease namespace: a DNS-1123 label; see `resolveNamespace()`. */
  namespace: string;
  /** Upper bound of one request in ms (the elector passes shorter deadlines); default 10 000. */
  requestTimeoutMs?: number;
  /** The candidate's identity, only to name it in error messages. */
  identity?: string;
}

type Verb = 'get' | 'create' | 'update';

/**
 * A `coordination.k8s.io/v1` Lease as the election record, as client-go's `LeaseLock`.
 * Needs RBAC verbs `get`, `create`, `update` on `leases` in the namespace.
 *
 * `update` PUTs the whole object last read (labels, annotations and owner references are
 * kept) with its `resourceVersion`, so the API server rejects stale writes (409 →
 * `LockConflictError`). Times are written as MicroTime with six fractional digits. A Lease
 * without `spec` reads as a free record with zero duration.
 *
 * Errors: `get` of a missing Lease resolves `undefined`; other failures reject with
 * {@link LeaseApiError} (`kind` says whether it is RBAC, credentials, invalid, transient or
 * a timeout) or `LockConflictError`.
 */
export class LeaseLock implements ResourceLock {
  /** `Lease <namespace>/<name>`. */
  readonly description: string;
  /** The Lease's name. */
  readonly name: string;
  /** The Lease's namespace. */
  readonly namespace: string;
  private readonly api: CoordinationV1Api;
  private readonly requestTimeoutMs: number;
  private readonly identity: string | undefined;
  /** The object last read or written, PUT back on update to keep its metadata. */
  private lease: V1Lease | undefined;

  /**
   * @throws InvalidLeaderElectionOptionError if the name or namespace is invalid, or the
   *   kubeconfig has no current cluster.
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
    if (!opts.kubeConfig?.getCurrentCluster()) {
      throw new InvalidLeaderElectionOptionError('kubeConfig', lockMessages.noCluster(), undefined);
    }
    this.api = opts.kubeConfig.makeApiClient(CoordinationV1Api);
  }

  /**
   * GETs the Lease; resolves `undefined` on 404. The version is its `resourceVersion`.
   * @throws LeaseApiError for any other failure.
   */
  async get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    try {
      const lease = await this.api.readNamespacedLease(
        { name: this.name, namespace: this.namespace },
        this.requestOptions(signal),
      );
      return this.remember(lease);
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw this.classify('get', error, signal);
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
    try {
      const lease = await this.api.createNamespacedLease(
        { namespace: this.namespace, body },
        this.requestOptions(signal),
      );
      return this.remember(lease).version;
    } catch (error) {
      throw this.classify('create', error, signal);
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
    try {
      const lease = await this.api.replaceNamespacedLease(
        { name: this.name, namespace: this.namespace, body },
        this.requestOptions(signal),
      );
      return this.remember(lease).version;
    } catch (error) {
      throw this.classify('update', error, signal);
    }
  }

  private remember(lease: V1Lease): VersionedLeaseRecord {
    this.lease = lease;
    return { record: fromLeaseSpec(lease), version: lease.metadata?.resourceVersion ?? '' };
  }

  /** Passes the caller's signal, bounded by `requestTimeoutMs`, to the HTTP request. */
  private requestOptions(signal: AbortSignal | undefined): ConfigurationOptions {
    const timeout = AbortSignal.timeout(this.requestTimeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    return {
      middleware: [
        {
          pre: (context) => {
            context.setSignal(combined);
            return new Observable(Promise.resolve(context));
          },
          post: (response) => new Observable(Promise.resolve(response)),
        },
      ],
      middlewareMergeStrategy: 'append',
    };
  }

  private classify(verb: Verb, error: unknown, signal: AbortSignal | undefined): Error {
    if (error instanceof ApiException) {
      const code = error.code;
      if (code === 409 && verb !== 'get') {
        return new LockConflictError(this.description, verb, { cause: error });
      }
      return this.apiError(verb, statusKind(code), code, statusMessage(error.body), error);
    }
    const timedOut =
      signal?.aborted ||
      (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError'));
    const message = networkMessage(error);
    return this.apiError(verb, timedOut ? 'timeout' : 'transient', undefined, message, error);
  }

  private apiError(
    verb: Verb,
    kind: LeaseApiErrorKind,
    statusCode: number | undefined,
    serverMessage: string | undefined,
    cause: unknown,
  ): LeaseApiError {
    return new LeaseApiError(
      {
        kind,
        verb,
        name: this.name,
        namespace: this.namespace,
        statusCode,
        identity: this.identity,
        serverMessage,
      },
      { cause },
    );
  }
}

/** Classifies an HTTP status as the API server answered it. */
function statusKind(code: number): LeaseApiErrorKind {
  if (code === 401) return 'unauthorized';
  if (code === 403) return 'forbidden';
  if (code === 404) return 'not-found';
  if (code === 409) return 'conflict';
  if (code === 408 || code === 429 || code >= 500) return 'transient';
  return 'invalid';
}

/** `message` of a Status body (raw JSON text in client-node 2.x, or an object). */
function statusMessage(body: unknown): string | undefined {
  try {
    const status = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: unknown };
    return typeof status?.message === 'string' ? status.message : undefined;
  } catch {
    return typeof body === 'string' && body ? body.slice(0, 300) : undefined;
  }
}

/** Message of a network error, with the system code (ECONNREFUSED, …) when fetch hides it. */
function networkMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = [cause?.code, cause?.message].find((d) => typeof d === 'string' && d !== '');
  return detail ? `${error.message} (${String(detail)})` : error.message;
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
