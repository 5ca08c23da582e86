/**
 * Tells the outside what happens to an election: the leadership callbacks (client-go's
 * `LeaderCallbacks`), the observer (client-go's metrics provider) and the leadership log
 * lines. Nothing they do can break the election. Framework-free.
 */

import type { LeaderTermEndReason } from '../../errors.js';
import type { LockOperation, ResourceLock } from '../../locks/resource-lock.js';
import { electionMessages } from '../election.messages.js';
import {
  type ElectionObservation,
  type ElectionObserver,
  type LeadershipChangeReason,
  type LockRequestOutcome,
  noopElectionObserver,
} from '../election-observer.js';
import type { ElectionLogger, LeaderCallbacks } from '../leader-elector.options.js';
import type { LeaderTerm } from '../leader-term.js';

/**
 * Whom an {@link ElectionNotifier} tells, and what it says about itself.
 * @internal
 */
export interface ElectionNotifierOptions {
  /** The election's name (the elector's `name`), in every observation. */
  name: string;
  /** This candidate's identity, in every observation and leadership log line. */
  identity: string;
  /** The lock; its description names it in log lines. */
  lock: Pick<ResourceLock, 'description'>;
  /** Receives the observations; its throws are ignored. Default: does nothing. */
  observer: ElectionObserver | undefined;
  /** The leadership callbacks; their throws and rejections are logged. */
  callbacks: LeaderCallbacks;
  /** Where leadership changes and failed callbacks are logged. */
  logger: ElectionLogger;
  /** The renew deadline, ms, for the step-down line. */
  renewDeadlineMs: number;
}

/**
 * One elector's outlet: every leadership change is logged, reported to the observer and
 * passed to the callbacks, in that order. Observer methods run synchronously and whatever they
 * throw is ignored (see {@link ElectionObserver}); a callback's throw or rejection is logged as
 * an error and never rethrown, as client-go runs its callbacks apart from the election loop.
 * @internal
 */
export class ElectionNotifier {
  private readonly lock: string;
  private readonly observer: ElectionObserver;
  private readonly logger: ElectionLogger;
  private readonly callbacks: LeaderCallbacks;

  /** @param options - see {@link ElectionNotifierOptions} (the elector's resolved options fit) */
  constructor(private readonly options: ElectionNotifierOptions) {
    this.lock = options.lock.description;
    this.observer = options.observer ?? noopElectionObserver;
    this.logger = options.logger;
    this.callbacks = options.callbacks;
  }

  /** A term began: logs it, `termStarted`, then `onStartedLeading` (not awaited). */
  startedLeading(term: LeaderTerm, reason: LeadershipChangeReason): void {
    const line = electionMessages.startedLeading(
      this.options.identity,
      this.lock,
      term.leaseTransitions,
    );
    this.logger.info(line);
    this.observe((o, e) => o.termStarted?.({ ...e, term, reason }));
    this.invoke('onStartedLeading', () => this.callbacks.onStartedLeading?.(term));
  }

  /** The leader's renew deadline passed without a successful renewal: it steps down. */
  renewDeadlineExceeded(): void {
    this.logger.warn(
      electionMessages.renewDeadlineExceeded(this.lock, this.options.renewDeadlineMs),
    );
  }

  /** A term ended (its signal just aborted): `termEnded`, `durationMs` on the monotonic clock. */
  termEnded(term: LeaderTerm, reason: LeaderTermEndReason, durationMs: number): void {
    this.observe((o, e) => o.termEnded?.({ ...e, term, reason, durationMs }));
  }

  /**
   * The ended term drains: logs why it ended, then calls `onStoppedLeading` and awaits it.
   * Resolves when it settles; never rejects.
   */
  async stoppedLeading(term: LeaderTerm, reason: LeaderTermEndReason): Promise<void> {
    this.logger.info(electionMessages.stoppedLeading(this.options.identity, this.lock, reason));
    try {
      await this.callbacks.onStoppedLeading?.(term);
    } catch (error) {
      this.logger.error(electionMessages.callbackFailed('onStoppedLeading', error));
    }
  }

  /**
   * The observed holder changed: `leaderObserved` (also for `''`, a released Lease), then,
   * for a non-empty holder, a log line and `onNewLeader` (client-go's `OnNewLeader`). The line
   * is at debug level when the holder is this candidate: its "started leading" line already
   * tells the change (one line per leadership change).
   */
  leaderChanged(holderIdentity: string, leaseTransitions: number): void {
    this.observe((o, e) => o.leaderObserved?.({ ...e, holderIdentity, leaseTransitions }));
    if (holderIdentity === '') return;
    const line = electionMessages.newLeader(holderIdentity, this.lock);
    if (holderIdentity === this.options.identity) this.logger.debug(line);
    else this.logger.info(line);
    this.invoke('onNewLeader', () => this.callbacks.onNewLeader?.(holderIdentity));
  }

  /** A renewal by the leader succeeded: `renewed`. */
  renewed(term: LeaderTerm): void {
    this.observe((o, e) => o.renewed?.({ ...e, term }));
  }

  /** A renewal fell back to GET + decide: `renewSlowPath` (client-go's `slowpathExercised`). */
  renewSlowPath(): void {
    this.observe((o, e) => o.renewSlowPath?.(e));
  }

  /** One lock request finished: `lockRequest`, `durationMs` on the monotonic clock. */
  lockRequest(operation: LockOperation, outcome: LockRequestOutcome, durationMs: number): void {
    this.observe((o, e) => o.lockRequest?.({ ...e, operation, outcome, durationMs }));
  }

  /** Calls the observer; whatever it throws is ignored (an observer never breaks an election). */
  private observe(call: (observer: ElectionObserver, event: ElectionObservation) => void): void {
    try {
      call(this.observer, { election: this.options.name, identity: this.options.identity });
    } catch {
      // Ignored by contract: see ElectionObserver.
    }
  }

  /** Calls a callback without awaiting it; a throw or a rejection is logged. */
  private invoke(callback: string, run: () => unknown): void {
    try {
      const result = run();
      if (isPromiseLike(result)) {
        result.then(undefined, (error: unknown) =>
          this.logger.error(electionMessages.callbackFailed(callback, error)),
        );
      }
    } catch (error) {
      this.logger.error(electionMessages.callbackFailed(callback, error));
    }
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}
