/**
 * Kubernetes Events on the Lease when leadership changes hands, as client-go's resourcelock
 * records them (`RecordEvent`: reason `LeaderElection`, note "<identity> became leader" /
 * "… stopped leading"), written with `events.k8s.io/v1` so `kubectl get events` and
 * `kubectl describe lease <name>` show who led when. Framework-free.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { LeaderTermEndReason } from '../errors.js';
import type {
  ElectionObservation,
  ElectionObserver,
  LeadershipChangeReason,
} from '../core/election-observer.js';
import type { ElectionLogger, LeaderTerm } from '../core/leader-elector.options.js';
import { LeaseEventWriter } from './lease-event.writer.js';
import { observabilityMessages } from './observability.messages.js';

export {
  DEFAULT_EVENT_REQUEST_TIMEOUT_MS,
  DEFAULT_REPORTING_CONTROLLER,
} from './lease-event.writer.js';

/** `reason` of every Event, as client-go's. */
export const LEADER_ELECTION_EVENT_REASON = 'LeaderElection';

/** Options of {@link LeaseEventsObserver}. */
export interface LeaseEventsObserverOptions {
  /** Credentials and cluster: the same kubeconfig the LeaseLock uses. */
  kubeConfig: KubeConfig;
  /** The Lease's namespace; the Events are created there. */
  namespace: string;
  /** The Lease's name; the Events' `regarding` object. */
  leaseName: string;
  /**
   * `reportingController` of the Events (a qualified name such as `example.com/billing`).
   * Default `nest-leader`. `reportingInstance` is the candidate's identity.
   */
  reportingController?: string;
  /** Where failures are logged (one warning per kind of failure); default the console. */
  logger?: Pick<ElectionLogger, 'warn' | 'debug'>;
  /** Timeout of each request in ms; default 5000. */
  requestTimeoutMs?: number;
}

/**
 * Records an Event on the Lease each time this candidate starts a term (type `Normal`, action
 * `BecameLeader`, note "<identity> became leader") and ends one (action `StoppedLeading`, note
 * "<identity> stopped leading: <reason>", type `Normal` after a shutdown, `Warning` when the
 * term was lost).
 *
 * Never blocks or fails the election: the observer methods only queue the write; it reads the
 * Lease (for its uid, so `kubectl describe lease` finds the Events) and creates the Event in the
 * background, in order. A failure is logged once per kind (forbidden, transient, …) as a warning
 * naming the fix, then at debug level. Needs RBAC `create` on `events` in API group
 * `events.k8s.io`, in the Lease's namespace (and `get` on the Lease, which the elector has).
 *
 * @throws InvalidLeaderElectionOptionError (constructor) for an invalid `namespace`,
 *   `leaseName`, `reportingController` or `requestTimeoutMs`.
 */
export class LeaseEventsObserver implements ElectionObserver {
  private readonly writer: LeaseEventWriter;

  constructor(options: LeaseEventsObserverOptions) {
    this.writer = new LeaseEventWriter(options);
  }

  /** Queues "<identity> became leader: <reason> (…)". */
  termStarted(
    event: ElectionObservation & { term: LeaderTerm; reason: LeadershipChangeReason },
  ): void {
    const note = observabilityMessages.becameLeaderNote(event.identity, event.reason);
    this.enqueue(event.identity, 'Normal', 'BecameLeader', note);
  }

  /** Queues "<identity> stopped leading: <reason>". */
  termEnded(event: ElectionObservation & { term: LeaderTerm; reason: LeaderTermEndReason }): void {
    const note = observabilityMessages.stoppedLeadingNote(event.identity, event.reason);
    const type = event.reason === 'stopped' || event.reason === 'handed-off' ? 'Normal' : 'Warning';
    this.enqueue(event.identity, type, 'StoppedLeading', note);
  }

  /**
   * Resolves when every Event queued so far was written or given up (each request is bounded
   * by `requestTimeoutMs`). Never rejects. Await it on shutdown so the last Event is not lost.
   */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  private enqueue(identity: string, type: 'Normal' | 'Warning', action: string, note: string) {
    this.writer.write({ identity, type, reason: LEADER_ELECTION_EVENT_REASON, action, note });
  }
}
