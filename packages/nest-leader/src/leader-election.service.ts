import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { type Clock, SystemClock } from './election/clock.js';
import { resolveIdentity } from './election/identity.js';
import { type LeaderElectionHealth, LeaderElector } from './election/leader-elector.js';
import {
  type LeaderElectionTimings,
  type LeaderTerm,
  validateLeaderElectionTimings,
} from './election/leader-elector.options.js';
import { InvalidLeaderElectionOptionError } from './errors.js';
import { InFlightRegistry } from './in-flight.registry.js';
import { DEFAULT_SHUTDOWN_GRACE_MS, LeadershipEvent } from './leader.constants.js';
import { LEADER_MODULE_OPTIONS } from './leader.module-definition.js';
import {
  LEADER_MODULE_OPTION_NAMES,
  type LeaderModuleOptions,
} from './leader-module-options.interface.js';
import { rejectUnknownOptions } from './election/option-names.js';
import { LeadershipEventsDispatcher } from './leadership-events.dispatcher.js';
import { validateLeaseName, validateNamespace } from './locks/kubernetes-names.js';
import { selectLock } from './locks/lock-selection.js';
import { nestMessages } from './messages.js';
import { toElectionLogger } from './nest-logger.adapter.js';

/**
 * This application's place in the leader election: ask whether it leads, who does, and wait
 * for leadership. Owns the `LeaderElector`: built (and the options validated) when the module
 * is instantiated, started in `onApplicationBootstrap` without blocking boot, stopped in
 * `beforeApplicationShutdown`: new `@LeaderOnly()` work is refused, in-flight work drains
 * (up to `shutdownGraceMs`), then the Lease is released.
 */
@Injectable()
export class LeaderElectionService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  /** The election's timings, defaults applied. */
  readonly timings: LeaderElectionTimings;
  private readonly logger = new Logger('LeaderElection');
  private readonly elector: LeaderElector;
  private readonly clock: Clock;
  private readonly shutdownGraceMs: number;
  private readonly startMessage: string;
  private readonly waiters = new Set<(term: LeaderTerm) => void>();
  /** The term between `onStartedLeading` and `onStoppedLeading`. */
  private leadingTerm: LeaderTerm | undefined;
  /** A new leader observed while our term was still ending: announced after `Lost`. */
  private pendingLeader: string | undefined;

  /** @throws InvalidLeaderElectionOptionError naming the first invalid option and its rule. */
  constructor(
    @Inject(LEADER_MODULE_OPTIONS) options: LeaderModuleOptions,
    private readonly events: LeadershipEventsDispatcher,
    private readonly inFlight: InFlightRegistry,
  ) {
    rejectUnknownOptions(options, LEADER_MODULE_OPTION_NAMES, 'LeaderModule');
    validateLeaseName(options.leaseName, 'leaseName');
    if (options.namespace !== undefined) validateNamespace(options.namespace);
    this.timings = validateLeaderElectionTimings(options);
    this.shutdownGraceMs = validateShutdownGraceMs(options.shutdownGraceMs);
    this.clock = options.clock ?? new SystemClock();
    const identity = options.identity ?? resolveIdentity();
    const { lock, kind, namespace, notice } = selectLock({ ...options, identity });
    if (notice) this.logger.log(notice);
    this.elector = new LeaderElector({
      lock,
      identity,
      ...this.timings,
      releaseOnStop: options.releaseOnShutdown,
      onLost: options.onLost,
      clock: this.clock,
      logger: toElectionLogger(this.logger),
      callbacks: {
        onStartedLeading: (term) => this.startedLeading(term),
        onStoppedLeading: (term) => this.stoppedLeading(term),
        onNewLeader: (identity) => this.newLeader(identity),
      },
    });
    this.startMessage = nestMessages.starting({
      identity: this.elector.identity,
      lock: lock.description,
      kind,
      namespace,
      ...this.timings,
      shutdownGraceMs: this.shutdownGraceMs,
    });
  }

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
    const { signal } = options;
    const term = this.term;
    if (term && this.isLeader()) return Promise.resolve(term);
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

  /** Starts campaigning; returns at once. */
  onApplicationBootstrap(): void {
    this.logger.log(this.startMessage);
    this.elector.start();
  }

  /** Refuses new `@LeaderOnly()` work, stops the elector: drains in-flight work, then releases. */
  async beforeApplicationShutdown(): Promise<void> {
    this.inFlight.close();
    await this.elector.stop();
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
    if (this.leadingTerm && identity !== this.identity) {
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
    const drained = await this.inFlight.drain(this.shutdownGraceMs, this.clock);
    if (!drained)
      this.logger.warn(nestMessages.drainTimedOut(this.inFlight.size, this.shutdownGraceMs));
  }
}

function validateShutdownGraceMs(value: unknown): number {
  if (value === undefined) return DEFAULT_SHUTDOWN_GRACE_MS;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidLeaderElectionOptionError(
      'shutdownGraceMs',
      nestMessages.shutdownGraceRule,
      value,
    );
  }
  return value;
}
