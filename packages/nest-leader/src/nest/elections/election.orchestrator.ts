import { Logger } from '@nestjs/common';
import type { Clock } from '../../core/clock.js';
import type { LeaderCallbacks, LeaderTerm } from '../../core/leader-elector.options.js';
import { LeadershipEvent } from '../leader.constants.js';
import { InFlightTracker } from '../leader-only/in-flight.tracker.js';
import { LeadershipEventsDispatcher } from '../leadership-events/leadership-events.dispatcher.js';
import { nestMessages } from '../nest.messages.js';

/** What an {@link ElectionOrchestrator} needs to know of its election. */
export interface ElectionOrchestratorOptions {
  readonly name: string;
  /** This replica's identity in the election. */
  readonly identity: string;
  readonly shutdownGraceMs: number;
  readonly clock: Clock;
}

/**
 * What happens around one election's terms, in order: its elector's {@link callbacks} land
 * here. Announces `acquired` → `lost` → `changed` to the election's handlers in the order they
 * happened to this replica, wakes `waitForLeadership()` callers, and when a term ends waits —
 * bounded by `shutdownGraceMs` — for the election's in-flight `@LeaderOnly()` work and
 * `@OnLeadershipLost()` handlers before the elector may release the Lease or campaign again.
 */
export class ElectionOrchestrator {
  /** The election's running `@LeaderOnly()` invocations. */
  readonly inFlight = new InFlightTracker();
  /** The election's leadership event handlers (filled by the explorer). */
  readonly events = new LeadershipEventsDispatcher();
  /** The elector's callbacks (client-go's `LeaderCallbacks`). */
  readonly callbacks: Required<LeaderCallbacks> = {
    onStartedLeading: (term) => this.startedLeading(term),
    onStoppedLeading: (term) => this.stoppedLeading(term),
    onNewLeader: (identity) => this.newLeader(identity),
  };
  private readonly logger = new Logger('LeaderElection');
  private readonly waiters = new Set<(term: LeaderTerm) => void>();
  /** The term between `onStartedLeading` and `onStoppedLeading`. */
  private leadingTerm: LeaderTerm | undefined;
  /** A new leader observed while our term was still ending: announced after `Lost`. */
  private pendingLeader: string | undefined;

  constructor(private readonly options: ElectionOrchestratorOptions) {}

  /**
   * Resolves with the next term this replica starts. Never settles if it never leads.
   * @param signal - stops waiting: the promise rejects with `signal.reason`
   */
  nextTerm(signal?: AbortSignal): Promise<LeaderTerm> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = (): void => {
        this.waiters.delete(waiter);
        reject(signal?.reason);
      };
      const waiter = (started: LeaderTerm): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(started);
      };
      this.waiters.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The election stopped (shutdown): refuse new `@LeaderOnly()` work of this election for good. */
  close(): void {
    this.inFlight.close();
  }

  private startedLeading(term: LeaderTerm): void {
    this.leadingTerm = term;
    for (const waiter of this.waiters) waiter(term);
    this.waiters.clear();
    void this.events.emit(LeadershipEvent.Acquired, term);
  }

  /**
   * Handlers see events in the order they happened to this replica: when another candidate
   * takes the Lease from us, `Lost` first, then `Changed` to the new leader — even though
   * the elector observes the new holder just before it ends our term.
   */
  private newLeader(identity: string): void {
    if (this.leadingTerm && identity !== this.options.identity) {
      this.pendingLeader = identity;
      return;
    }
    void this.events.emit(LeadershipEvent.Changed, identity);
  }

  /** Awaited by the elector before it releases the Lease or campaigns again. */
  private async stoppedLeading(term: LeaderTerm): Promise<void> {
    this.leadingTerm = undefined;
    this.inFlight.track(() => this.events.emit(LeadershipEvent.Lost, term));
    const pendingLeader = this.pendingLeader;
    this.pendingLeader = undefined;
    if (pendingLeader !== undefined) void this.events.emit(LeadershipEvent.Changed, pendingLeader);
    const { name, shutdownGraceMs, clock } = this.options;
    const drained = await this.inFlight.drain(shutdownGraceMs, clock);
    if (!drained) {
      this.logger.warn(nestMessages.drainTimedOut(name, this.inFlight.size, shutdownGraceMs));
    }
  }
}
