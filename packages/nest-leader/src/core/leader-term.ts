/**
 * A leader term: the {@link LeaderTerm} users hold (the fencing token, when it began, and
 * call-time liveness) and its lifetime on the elector's side ({@link LeaderTermLifetime}: the
 * self-checking signal and the step-down timer). Its own file so the observer seam, the
 * options and the elector can all name it without a cycle. Framework-free.
 */

import { LeaderTermEndedError, type LeaderTermEndReason } from '../errors.js';
import type { Clock, TimerHandle } from './clock.js';

/** A leader term: from acquiring the Lease to losing, releasing or stepping down. */
export interface LeaderTerm {
  /**
   * `leaseTransitions` of the Lease when this term began: strictly increasing per Lease
   * object, so downstream systems can use it as a fencing token to reject stale leaders.
   */
  readonly leaseTransitions: number;
  /** When this term began (wall clock; the `acquireTime` written to the Lease). */
  readonly acquiredAt: Date;
  /**
   * Aborted the moment the term ends, before `onStoppedLeading` is called. Its `reason` is a
   * `LeaderTermEndedError`. Pass it to leader-only work so it stops with the term. Reading
   * `signal.aborted` or calling `signal.throwIfAborted()` re-checks the renew deadline, like
   * {@link LeaderTerm.isLive}; listeners (`'abort'` events, `fetch`) fire when the elector's
   * timer runs, which after a pause (SIGSTOP, long GC) may be after other due timers and I/O.
   */
  readonly signal: AbortSignal;
  /**
   * True while this term is live: not ended, and its renew deadline not passed on the local
   * monotonic clock — re-checked at call time, so a process paused past the deadline reads
   * `false` on waking, before any timer of the elector has run (and the term ends right there).
   * Check it before each unit of leader-only work.
   */
  isLive(): boolean;
  /**
   * Throws if this term is no longer live (same check as {@link LeaderTerm.isLive}).
   * @throws LeaderTermEndedError (the `signal`'s reason) when the term has ended.
   */
  throwIfEnded(): void;
}

/**
 * What a {@link LeaderTermLifetime} needs: the term's facts, its deadline and whom to tell.
 * @internal
 */
export interface LeaderTermLifetimeOptions {
  /** The term's fencing token: `leaseTransitions` of the record that began it. */
  leaseTransitions: number;
  /** When the term began (wall clock; the record's `acquireTime`). */
  acquiredAt: Date;
  /** Monotonic time, ms, the acquiring write was sent: the first renew deadline counts from it. */
  startedMs: number;
  /** How long, ms, the term lives past the start of its last successful write. */
  renewDeadlineMs: number;
  /** Monotonic time and the step-down timer. */
  clock: Clock;
  /** Called once when the renew deadline is found passed (by the timer or a call-time check). */
  onRenewDeadlineExceeded(): void;
  /** Called once when the term ends: why, and how long it lasted (ms, monotonic). */
  onEnded(reason: LeaderTermEndReason, durationMs: number): void;
}

/** `AbortSignal.prototype.aborted`'s own getter: whether the signal was aborted, no re-check. */
export const nativeAborted = Object.getOwnPropertyDescriptor(
  AbortSignal.prototype,
  'aborted',
)!.get!;

/**
 * Makes a term's signal check its term at call time: reading `aborted` or calling
 * `throwIfAborted()` runs `isLive()` first, so code that only looks at the signal after a pause
 * never sees "not aborted" before a timer had a chance to run. Used by {@link LeaderTermLifetime}
 * and by the sharded election's shard terms.
 * @param signal - the term's signal (its controller aborts it when the term ends)
 * @param isLive - the term's call-time check; it aborts the signal when the term is over
 */
export function checkTermOnRead(signal: AbortSignal, isLive: () => boolean): void {
  Object.defineProperties(signal, {
    aborted: {
      get: () => {
        if (!nativeAborted.call(signal)) isLive();
        return nativeAborted.call(signal) as boolean;
      },
    },
    throwIfAborted: {
      value: () => {
        if (!isLive()) throw signal.reason;
      },
    },
  });
}

/**
 * The lifetime of one leader term on the elector's side: the {@link LeaderTerm} users hold, a
 * step-down timer at the renew deadline (a local timer, so a hung request cannot keep anyone
 * leader, as client-go's `renew` loop bounded by `RenewDeadline`), and a call-time deadline
 * check behind `isLive()`, `throwIfEnded()` and the term signal's `aborted`, so a process
 * paused past the deadline (SIGSTOP, long GC) sees the term over before any timer ran. The
 * term signal plays the part of the context client-go cancels when leading stops.
 *
 * Two ends: the term's end for leader-only work ({@link LeaderTermLifetime.end}), and the
 * loss of the Lease ({@link LeaderTermLifetime.lose}), after which it is no longer renewed.
 * On `stop()` the first comes without the second: the Lease is renewed while the work drains.
 * @internal
 */
export class LeaderTermLifetime {
  /** The term as users hold it. */
  readonly term: LeaderTerm;
  /** Monotonic time, ms, the term began (its acquiring write was sent). */
  readonly startedMs: number;
  /** Set once the term is ending: the `onStoppedLeading` drain, shared by every caller. */
  ending: Promise<void> | undefined;
  private readonly options: LeaderTermLifetimeOptions;
  /** Aborts `term.signal`: the term is over for leader-only work. */
  private readonly controller = new AbortController();
  /** Aborted when the Lease is no longer ours to renew (lost, taken over, stepped down). */
  private readonly holdingController = new AbortController();
  private lastRenewStart: number;
  private stepDownTimer: TimerHandle | undefined;

  /** Begins the term: builds its self-checking signal and arms the step-down timer. */
  constructor(options: LeaderTermLifetimeOptions) {
    this.options = options;
    this.startedMs = options.startedMs;
    this.lastRenewStart = options.startedMs;
    const signal = this.controller.signal;
    const isLive = (): boolean => this.isLive();
    checkTermOnRead(signal, isLive);
    this.term = Object.freeze({
      leaseTransitions: options.leaseTransitions,
      acquiredAt: new Date(options.acquiredAt.getTime()),
      signal,
      isLive,
      throwIfEnded: (): void => {
        if (!isLive()) throw signal.reason;
      },
    });
    this.scheduleStepDown();
  }

  /**
   * Monotonic time, ms, the last successful acquiring or renewing WRITE was sent: a follower
   * can only have seen it after that, so counting the deadline from here is never late.
   */
  get lastRenewStartMs(): number {
    return this.lastRenewStart;
  }

  /** Aborted when the Lease is no longer ours to renew; the renew loop runs until then. */
  get holding(): AbortSignal {
    return this.holdingController.signal;
  }

  /** Why the term ended, or `undefined` while it has not (no deadline check). */
  get endReason(): LeaderTermEndReason | undefined {
    if (!nativeAborted.call(this.controller.signal)) return undefined;
    return (this.controller.signal.reason as LeaderTermEndedError).reason;
  }

  /** True while the term is live; ends it (a step-down) if its renew deadline has passed. */
  isLive(): boolean {
    if (nativeAborted.call(this.controller.signal)) return false;
    if (!this.renewDeadlinePassed()) return true;
    this.stepDown();
    return false;
  }

  /** True once renewDeadline has passed since the start of the last successful write. */
  renewDeadlinePassed(): boolean {
    return this.options.clock.nowMs() - this.lastRenewStart >= this.options.renewDeadlineMs;
  }

  /**
   * A renewing write sent at `writeStartedMs` (monotonic ms) succeeded: the deadline moves
   * to renewDeadline after it (never back), unless the term has ended.
   */
  renewed(writeStartedMs: number): void {
    this.lastRenewStart = Math.max(this.lastRenewStart, writeStartedMs);
    if (!this.controller.signal.aborted) this.scheduleStepDown();
  }

  /** The renew deadline passed: report it, end the term and stop renewing. */
  stepDown(): void {
    this.options.onRenewDeadlineExceeded();
    this.lose('renew-deadline-exceeded');
  }

  /**
   * The Lease is no longer ours: end the term (if not yet) and stop renewing.
   * @param reason - why, the `reason` of the term signal's `LeaderTermEndedError`
   */
  lose(reason: LeaderTermEndReason): void {
    this.end(reason);
    this.holdingController.abort();
  }

  /**
   * Ends the term for leader-only work (aborts its signal with a `LeaderTermEndedError`) and
   * reports it once; later calls do nothing. The Lease is still renewed until
   * {@link LeaderTermLifetime.lose}.
   */
  end(reason: LeaderTermEndReason): void {
    this.stepDownTimer?.cancel();
    if (nativeAborted.call(this.controller.signal)) return;
    this.controller.abort(new LeaderTermEndedError(reason, this.term.leaseTransitions));
    this.options.onEnded(reason, this.options.clock.nowMs() - this.startedMs);
  }

  private scheduleStepDown(): void {
    this.stepDownTimer?.cancel();
    const { clock, renewDeadlineMs } = this.options;
    const dueInMs = this.lastRenewStart + renewDeadlineMs - clock.nowMs();
    this.stepDownTimer = clock.setTimer(dueInMs, () => {
      if (this.isLive()) this.scheduleStepDown();
    });
  }
}
