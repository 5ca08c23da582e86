import type { LeaderElectionHealth } from '../election/leader-elector.js';
import type { LeaderElectionTimings, LeaderTerm } from '../election/leader-elector.options.js';
import type { ElectionOrchestrator } from './election.orchestrator.js';
import type { ManagedElector } from './elections.interfaces.js';

/**
 * This application's place in one leader election: ask whether it leads, who does, and wait
 * for leadership. Inject the default election's (`LeaderModule.forRoot()`) as
 * `LeaderElectionService`, a named one with `@InjectElection('shard-a')` (the token is
 * `getLeaderElectionToken('shard-a')`). Built by the module; its elector starts when the
 * application bootstraps and stops (draining, then releasing the Lease) when it shuts down.
 */
export class LeaderElectionService {
  /**
   * Created by `LeaderModule` for each election; inject it, never construct it.
   * @param name - the election's name (`'default'` for `forRoot()`'s)
   * @param timings - the election's timings, defaults applied
   * @internal
   */
  constructor(
    readonly name: string,
    private readonly elector: ManagedElector,
    private readonly orchestrator: ElectionOrchestrator,
    readonly timings: LeaderElectionTimings,
  ) {}

  /** This replica's identity, as written to the Lease's `holderIdentity`. */
  get identity(): string {
    return this.elector.identity;
  }

  /** Identity of the leader as last observed (possibly this replica), or `undefined` if none. */
  get leader(): string | undefined {
    return this.elector.leader;
  }

  /** `leaseTransitions` of the Lease as last observed (on followers too); `undefined` before the first read. */
  get leaseTransitions(): number | undefined {
    return this.elector.leaseTransitions;
  }

  /** The current term while this replica leads, else `undefined`. See also `currentTerm()`. */
  get term(): LeaderTerm | undefined {
    return this.elector.term;
  }

  /**
   * True only while this replica leads and its term is live by the local monotonic clock —
   * re-checked at call time, so it turns false at the step-down deadline even if timers
   * could not run (paused process, long GC).
   */
  isLeader(): boolean {
    return this.elector.isLeader();
  }

  /**
   * Liveness of the elector, as client-go's `HealthzAdaptor`: unhealthy only when it is
   * wedged (believes it leads but has not renewed for `leaseDuration` + `toleranceMs`, or its
   * loop died); followers are healthy.
   * @param toleranceMs - extra milliseconds past the lease duration before reporting unhealthy
   */
  health(toleranceMs?: number): LeaderElectionHealth {
    return this.elector.health(toleranceMs);
  }

  /**
   * Resolves with the term once this replica leads (at once if it already does). Never
   * settles if it never leads: pass a signal to bound the wait.
   * @param options.signal - stops waiting: the promise rejects with `signal.reason`
   */
  waitForLeadership(options: { signal?: AbortSignal } = {}): Promise<LeaderTerm> {
    const term = this.term;
    if (term) return Promise.resolve(term);
    return this.orchestrator.nextTerm(options.signal);
  }
}
