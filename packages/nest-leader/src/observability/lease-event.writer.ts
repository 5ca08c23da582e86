/**
 * Writes Kubernetes Events (`events.k8s.io/v1`) about one Lease, in the background and in
 * order: what the Events observers (leadership, shard moves) share. Never blocks or fails the
 * caller. Framework-free.
 */
import type { KubeConfig, V1Lease, V1ObjectReference } from '@kubernetes/client-node';
import type { ElectionLogger } from '../core/leader-elector.options.js';
import { loadClientNode } from '../kubernetes/client-node.loader.js';
import { withSharedConnection } from '../kubernetes/connection-pool.js';
import { validateLeaseName, validateNamespace } from '../kubernetes/names.js';
import { validateQualifiedName } from '../kubernetes/qualified-name.js';
import {
  type KubernetesRequestOptions,
  kubernetesRequestOptions,
  validateRequestTimeoutMs,
} from '../kubernetes/request-options.js';
import { EVENT_RESOURCE, observabilityMessages } from './observability.messages.js';
import {
  classifyObserverFailure,
  consoleWarnings,
  FailureReporter,
  SerialQueue,
} from './observer-writes.js';

/** Default `reportingController` of the Events. */
export const DEFAULT_REPORTING_CONTROLLER = 'nest-leader';
/** Default timeout of one request (read the Lease, create the Event), in ms. */
export const DEFAULT_EVENT_REQUEST_TIMEOUT_MS = 5_000;

/** Options of {@link LeaseEventWriter}. */
export interface LeaseEventWriterOptions {
  /** Credentials and cluster: the same kubeconfig the Lease lock uses. */
  kubeConfig: KubeConfig;
  /** The Lease's namespace; the Events are created there. */
  namespace: string;
  /** The Lease's name; the Events' `regarding` object. */
  leaseName: string;
  /** `reportingController` of the Events (a qualified name); default `nest-leader`. */
  reportingController?: string;
  /** Where failures are logged (one warning per kind of failure); default the console. */
  logger?: Pick<ElectionLogger, 'warn' | 'debug'>;
  /** Timeout of each request in ms; default 5000. */
  requestTimeoutMs?: number;
}

/** One Event to record on the Lease. */
export interface LeaseEvent {
  /** `reportingInstance`: the identity of the candidate or member that reports it. */
  identity: string;
  type: 'Normal' | 'Warning';
  /** `reason`, e.g. `LeaderElection` or `ShardsMoved`. */
  reason: string;
  /** `action`, e.g. `BecameLeader`. */
  action: string;
  /** `note`, at most 1 KB (the API server's limit). */
  note: string;
}

/**
 * Queues Events on one Lease: each write reads the Lease (for its uid, so `kubectl describe
 * lease` finds the Event) and creates the Event, one after another. A failure is logged once per
 * kind (forbidden, transient, …) as a warning naming the fix, then at debug level. Needs RBAC
 * `create` on `events` in API group `events.k8s.io`, in the Lease's namespace.
 *
 * @throws InvalidLeaderElectionOptionError (constructor) for an invalid `namespace`,
 *   `leaseName`, `reportingController` or `requestTimeoutMs`.
 */
export class LeaseEventWriter {
  private readonly kubeConfig: KubeConfig;
  private readonly namespace: string;
  private readonly leaseName: string;
  private readonly reportingController: string;
  private readonly requestTimeoutMs: number;
  private readonly failures: FailureReporter;
  private readonly queue = new SerialQueue();

  constructor(options: LeaseEventWriterOptions) {
    this.namespace = validateNamespace(options.namespace, 'namespace');
    this.leaseName = validateLeaseName(options.leaseName, 'leaseName');
    this.kubeConfig = withSharedConnection(options.kubeConfig);
    this.reportingController = validateQualifiedName(
      options.reportingController ?? DEFAULT_REPORTING_CONTROLLER,
      'reportingController',
      observabilityMessages.reportingControllerRule,
    );
    this.requestTimeoutMs = validateRequestTimeoutMs(
      options.requestTimeoutMs,
      DEFAULT_EVENT_REQUEST_TIMEOUT_MS,
    );
    this.failures = new FailureReporter(options.logger ?? consoleWarnings);
  }

  /** Queues `event`, stamped now; returns at once. */
  write(event: LeaseEvent): void {
    const eventTime = new Date();
    const name = eventName(this.leaseName, eventTime);
    let request: KubernetesRequestOptions | undefined;
    this.queue.push(
      async () => {
        const k8s = loadClientNode();
        const regarding: V1ObjectReference = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          name: this.leaseName,
          namespace: this.namespace,
        };
        const lease = await this.readLease();
        if (lease?.metadata?.uid) regarding.uid = lease.metadata.uid;
        request = kubernetesRequestOptions(this.requestTimeoutMs);
        await this.kubeConfig.makeApiClient(k8s.EventsV1Api).createNamespacedEvent(
          {
            namespace: this.namespace,
            body: {
              apiVersion: 'events.k8s.io/v1',
              kind: 'Event',
              metadata: { name, namespace: this.namespace },
              eventTime: new k8s.V1MicroTime(eventTime.getTime()),
              type: event.type,
              reason: event.reason,
              action: event.action,
              note: event.note,
              regarding,
              reportingController: this.reportingController,
              reportingInstance: event.identity,
            },
          },
          request.options,
        );
      },
      (error) => {
        const failure = classifyObserverFailure(
          {
            verb: 'create',
            resource: EVENT_RESOURCE,
            name,
            namespace: this.namespace,
            identity: event.identity,
            sent: request?.sent() ?? false,
          },
          error,
        );
        const lease = `Lease ${this.namespace}/${this.leaseName}`;
        this.failures.report(failure.kind, observabilityMessages.eventFailed(lease, failure));
      },
    );
  }

  /**
   * Resolves when every Event queued so far was written or given up (each request is bounded
   * by `requestTimeoutMs`). Never rejects.
   */
  flush(): Promise<void> {
    return this.queue.idle();
  }

  /** The Lease, for its uid; `undefined` if it cannot be read (the Event is still recorded). */
  private async readLease(): Promise<V1Lease | undefined> {
    try {
      const api = this.kubeConfig.makeApiClient(loadClientNode().CoordinationV1Api);
      return await api.readNamespacedLease(
        { name: this.leaseName, namespace: this.namespace },
        kubernetesRequestOptions(this.requestTimeoutMs).options,
      );
    } catch {
      return undefined;
    }
  }
}

/**
 * `<lease>.<hex nanoseconds><4 random hex>`: client-go's recorder names Events
 * `<object>.<hex UnixNano>`; the random part keeps two replicas apart in the same millisecond.
 */
function eventName(leaseName: string, time: Date): string {
  const nanos = (BigInt(time.getTime()) * 1_000_000n).toString(16);
  const random = Math.floor(Math.random() * 0x10000)
    .toString(16)
    .padStart(4, '0');
  return `${leaseName.slice(0, 253 - 1 - nanos.length - 4)}.${nanos}${random}`;
}
