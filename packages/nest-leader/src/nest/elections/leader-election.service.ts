import { LeaderElectionError } from '../../errors.js';
import { nestErrorMessages } from '../../errors.messages.js';
import type { LeaderElectionHealth } from '../../core/election/leader-elector.health.js';
import type { TransferLeadershipOptions } from '../../core/handoff/leadership-handoff.js';
import {
  type LeaderElectionTimings,
  type LeaderTerm,
  lockRequestTimeoutMs,
} from '../../core/leader-elector.options.js';
import type { ResourceLock } from '../../locks/resource-lock.js';
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
   * @param lock - the election's lock, read by {@link verifyLeadership}
   * @internal
   */
  constructor(
    readonly name: string,
    private readonly elector: ManagedElector,
    private readonly orchestrator: ElectionOrchestrator,
    readonly timings: LeaderElectionTimings,
    private readonly lock?: ResourceLock,
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
   * Verifies leadership with one authoritative read of the lock (a plain GET of the Lease, not
   * the elector's cached copy): resolves true only if the stored holder is this replica, the
   * stored `leaseTransitions` equals the current term's, and the term is still live by the local
   * clock after the read. Costs one GET per call — use it around critical work (see
   * `@LeaderOnly({ verify })`), not on every tick. The read stops (false) when the term ends,
   * and after the election's per-request timeout (`lockRequestTimeoutMs` of `nest-leader/core`).
   *
   * Resolves false, never rejects, when the read fails (it cannot confirm leadership).
   * @param options.signal - stops the read: the promise rejects with `signal.reason`
   */
  verifyLeadership(options: { signal?: AbortSignal } = {}): Promise<boolean> {
    const term = this.elector.term;
    if (!term) {
      options.signal?.throwIfAborted();
      return Promise.resolve(false);
    }
    return this.verifyTerm(term, options);
  }

  /**
   * As {@link verifyLeadership}, for a given term of this replica (e.g. `currentTerm()` inside
   * long work): true only if the Lease still names this replica at `term.leaseTransitions` and
   * `term` is still live. With `whileDraining`, a term ended by shutdown or a handoff (`stopped`,
   * `handed-off`: the elector keeps renewing the Lease while leader-only work drains) also counts,
   * as long as the Lease still names it.
   * @param options.signal - stops the read: the promise rejects with `signal.reason`
   */
  async verifyTerm(
    term: LeaderTerm,
    options: { signal?: AbortSignal; whileDraining?: boolean } = {},
  ): Promise<boolean> {
    const { signal, whileDraining = false } = options;
    signal?.throwIfAborted();
    const usable = () => this.elector.term === term || (whileDraining && endedByShutdown(term));
    if (!this.lock || !usable()) return false;
    const timeoutMs = lockRequestTimeoutMs(this.timings.renewDeadlineSeconds);
    const signals = [AbortSignal.timeout(timeoutMs)];
    if (!whileDraining) signals.push(term.signal);
    if (signal) signals.push(signal);
    let stored: Awaited<ReturnType<ResourceLock['get']>>;
    try {
      stored = await this.lock.get(AbortSignal.any(signals));
    } catch {
      signal?.throwIfAborted();
      return false;
    }
    signal?.throwIfAborted();
    return (
      stored !== undefined &&
      stored.record.holderIdentity === this.elector.identity &&
      stored.record.leaseTransitions === term.leaseTransitions &&
      usable()
    );
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

  /**
   * Hands this election's leadership to the replica whose identity is `to` (targeted handoff,
   * as `LeaderElector.transferLeadership`, which says what is written and what other
   * candidates, client-go's included, see): the term ends and its leader-only work drains
   * (`@LeaderOnly()` calls in flight finish, as on shutdown), then the Lease is written so that
   * `to` takes it at once and nobody else may before `leaseDurationSeconds` (default the
   * election's leaseDuration) has passed. This replica stays a candidate. Without `to`, hands
   * to the preferred replica among those advertising themselves (`podTemplateHash`,
   * `priority`; the order: `preferredCandidate` of `nest-leader/core`), read from the Lease
   * with one request.
   * @param to - the identity (e.g. pod name) of the replica to hand leadership to; omit it to
   *   hand to the preferred one
   * @param options.leaseDurationSeconds - how long the Lease is reserved for `to`, whole
   *   seconds, at most the election's leaseDurationSeconds (its default)
   * @returns resolves once the handoff is written (not when `to` has taken it)
   * @throws LeadershipTransferError `not-leader` (synchronously) when this replica does not
   *   lead; `no-candidate` (rejected, the term going on) without `to` when no other replica
   *   advertises itself; `lease-lost` or `write-failed` (rejected) after the term ended.
   * @throws InvalidLeaderElectionOptionError (synchronously) for an empty `to`, this replica's
   *   own identity, or a `leaseDurationSeconds` that is not a whole number ≥ 1 or exceeds the
   *   election's leaseDurationSeconds.
   * @throws LeaderElectionError if the election's elector is a custom one without
   *   `transferLeadership` (see `ManagedElector`).
   */
  transferLeadership(to?: string, options?: TransferLeadershipOptions): Promise<void> {
    if (!this.elector.transferLeadership) {
      throw new LeaderElectionError(nestErrorMessages.transferUnsupported(this.name));
    }
    return this.elector.transferLeadership(to, options);
  }
}

/**
 * The term ended while its Lease is still renewed during the drain: the elector is stopping,
 * or handing leadership over.
 */
function endedByShutdown(term: LeaderTerm): boolean {
  const reason = term.signal.reason as { reason?: unknown } | undefined;
  return term.signal.aborted && (reason?.reason === 'stopped' || reason?.reason === 'handed-off');
}
