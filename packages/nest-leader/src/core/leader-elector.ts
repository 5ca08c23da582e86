/**
 * The election algorithm, as client-go's `tools/leaderelection` (`Run` → `acquire` →
 * `renew` → `release`, `tryAcquireOrRenew`), reading top to bottom. Framework-free.
 */

import {
  LeaderElectionError,
  LeaderTermEndedError,
  type LeaderTermEndReason,
  KubernetesApiError,
  LockConflictError,
} from '../errors.js';
import { electionMessages, healthMessages } from '../messages.js';
import {
  copyLeaseRecord,
  type LeaseRecord,
  type LockOperation,
  type ResourceLock,
  type VersionedLeaseRecord,
} from '../locks/resource-lock.js';
import { abortable, type Clock, SystemClock, type TimerHandle, timeoutSignal } from './clock.js';
import {
  type ElectionObservation,
  type ElectionObserver,
  type LockRequestOutcome,
  noopElectionObserver,
} from './election-observer.js';
import {
  type ElectionLogger,
  ACQUIRE_JITTER,
  type LeaderElectorOptions,
  type LeaderTerm,
  MAX_LEASE_TRANSITIONS,
  resolveLeaderElectorOptions,
  type ResolvedLeaderElectorOptions,
} from './leader-elector.options.js';
import { followerMessages } from './follower.messages.js';
import { LockWatchSession } from './lock-watch-session.js';
import { RateLimitedLogger } from './rate-limited-logger.js';
import { isWatchableLock } from '../locks/watchable-lock.js';

/** Result of {@link LeaderElector.health}, as client-go's `HealthzAdaptor.Check`. */
export interface LeaderElectionHealth {
  healthy: boolean;
  /** Why it is unhealthy; absent when healthy. */
  reason?: string;
}

/** How many times `release` re-reads after a conflict before giving up. */
const MAX_RELEASE_ATTEMPTS = 3;

/**
 * How long 403s are tolerated (logged as a warning, without the RBAC hint) when the same
 * credentials worked before: a restarted kube-apiserver answers 403 for a few seconds (2–5 s
 * measured) while its RBAC informer cache syncs.
 */
export const ACCESS_DENIED_GRACE_MS = 10_000;

/** The last record seen and the local monotonic time it was seen to change. */
interface Observation extends VersionedLeaseRecord {
  observedAtMs: number;
}

/** The live (or ending) term and its step-down deadline. */
interface ActiveTerm {
  term: LeaderTerm;
  /** Monotonic time the term began (its acquiring write was sent). */
  startedMs: number;
  /** Aborts `term.signal`: the term is over for leader-only work. */
  controller: AbortController;
  /**
   * Aborted when the Lease is no longer ours to renew (lost, taken over, stepped down). On
   * `stop()` the term ends first and the Lease is still renewed while its work drains.
   */
  holding: AbortController;
  /**
   * Monotonic time the last successful acquiring or renewing WRITE was sent: a follower can
   * only have seen it after that, so counting the deadline from here is never late.
   */
  lastRenewStartMs: number;
  stepDownTimer?: TimerHandle;
  /** Set once the term is ending: the `onStoppedLeading` drain, shared by every caller. */
  ending?: Promise<void>;
}

/** What one tryAcquireOrRenew did; `writeStartedMs`: when the winning write was sent. */
type Attempt =
  | { outcome: 'leading'; writeStartedMs: number }
  | { outcome: 'held-by-other' | 'lease-deleted' | 'failed' };

const HELD_BY_OTHER: Attempt = { outcome: 'held-by-other' };
const LEASE_DELETED: Attempt = { outcome: 'lease-deleted' };
const FAILED: Attempt = { outcome: 'failed' };

/** The election record's fields (not metadata): what client-go compares to see a change. */
function sameElectionRecord(a: LeaseRecord, b: LeaseRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    Object.is(a.leaseDurationSeconds, b.leaseDurationSeconds) &&
    Object.is(a.leaseTransitions, b.leaseTransitions) &&
    a.acquireTime?.getTime() === b.acquireTime?.getTime() &&
    a.renewTime?.getTime() === b.renewTime?.getTime()
  );
}

const nativeAborted = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')!.get!;

const consoleLogger: ElectionLogger = {
  debug: () => undefined,
  info: (message) => console.info(`[nest-leader] ${message}`),
  warn: (message) => console.warn(`[nest-leader] ${message}`),
  error: (message) => console.error(`[nest-leader] ${message}`),
};

/**
 * One candidate in a leader election on a {@link ResourceLock}, with client-go's
 * semantics: expiry judged by when this process observed the election record change (local
 * monotonic clock, tolerant of clock skew; metadata writes are not renewals), acquire every
 * retryPeriod with jitter, renew every retryPeriod (between the starts of attempts), step down
 * when no renewal succeeded within renewDeadline of the start of the last successful write,
 * release on stop.
 *
 * Leadership comes in terms ({@link LeaderTerm}); each has an AbortSignal aborted the
 * moment it ends, and call-time checks (`isLive()`, `throwIfEnded()`). Unlike client-go,
 * losing leadership re-enters the election by default (`onLost: 'recampaign'`), every new
 * term increments `leaseTransitions`, even when it re-acquires a Lease still naming this
 * identity, and a Lease deleted under a live holder is not recreated before that holder's
 * lease has expired by this candidate's observation, continuing from the highest
 * `leaseTransitions` it has seen — so the term's `leaseTransitions` is a strictly increasing
 * fencing token (see the README's safety section for the limits).
 *
 * @example
 * const elector = new LeaderElector({ lock, identity: resolveIdentity(), callbacks: { … } });
 * elector.start();
 * // …
 * await elector.stop();
 */
export class LeaderElector {
  /** This candidate's identity, written as `holderIdentity` while it leads. */
  readonly identity: string;
  /** The election's name in observations (the `name` option; default the lock's description). */
  readonly name: string;
  private readonly config: ResolvedLeaderElectorOptions;
  private readonly lock: ResourceLock;
  private readonly clock: Clock;
  private readonly logger: ElectionLogger;
  private readonly observer: ElectionObserver;
  private readonly failures: RateLimitedLogger;
  /** The followers' watch of the lock (none without a watchable lock or with `watchLease: false`). */
  private readonly following: LockWatchSession;

  private observed: Observation | undefined;
  /** Highest valid leaseTransitions seen in any record (read or written); a recreated Lease continues it. */
  private highestTransitions: number | undefined;
  /** `<holder> <transitions>` of the last holder we said we wait for (unprovable liveness). */
  private waitReported: string | undefined;
  /** Set while the Lease is missing and we wait out the last holder's lease (logged once). */
  private missingReported = false;
  /** Monotonic time this candidate first found the Lease missing; cleared once it exists again. */
  private missingSinceMs: number | undefined;
  private reportedLeader: string | undefined;
  /** The watch reported the record deleted since the last attempt. */
  private deletionSeen = false;
  private current: ActiveTerm | undefined;
  /** Set when another process renewed our Lease under our identity; cleared on acquiring. */
  private sharedIdentitySuspected = false;
  /** leaseTransitions of our last attempted write naming us: what `release` may clear. */
  private ownTransitions: number | undefined;
  /** Lock verbs that succeeded with these credentials: a later 403 on one may be a cache sync. */
  private readonly workedOperations = new Set<LockOperation>();
  /** Per verb, when the current run of 403s began, if one is going on. */
  private readonly deniedSinceMs = new Map<LockOperation, number>();
  private state: 'new' | 'running' | 'stopping' | 'stopped' | 'lost' | 'failed' = 'new';
  private loopError: unknown;
  private runController: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  /**
   * Validates the options once (as client-go's `NewLeaderElector`); does not touch the lock.
   * @throws InvalidLeaderElectionOptionError naming the option and the rule it breaks
   *   (including unknown option names, with the closest known one).
   */
  constructor(options: LeaderElectorOptions) {
    this.config = resolveLeaderElectorOptions(options);
    this.identity = this.config.identity;
    this.name = this.config.name;
    this.lock = this.config.lock;
    this.clock = options.clock ?? new SystemClock();
    this.logger = options.logger ?? consoleLogger;
    this.observer = this.config.observer ?? noopElectionObserver;
    this.failures = new RateLimitedLogger(this.logger, this.clock);
    const watchable = this.config.watchLease && isWatchableLock(this.lock) ? this.lock : undefined;
    this.following = new LockWatchSession(watchable, this.clock, this.logger, {
      onRecord: (current) => {
        if (current) this.observe(current);
        else this.deletionSeen = true;
      },
    });
  }

  /** The observed holder of the lock, or `undefined` if it is free or not read yet. */
  get leader(): string | undefined {
    return this.observed?.record.holderIdentity || undefined;
  }

  /**
   * `leaseTransitions` of the record as last observed, whoever holds it (followers too), or
   * `undefined` before the first successful read.
   */
  get leaseTransitions(): number | undefined {
    return this.observed?.record.leaseTransitions;
  }

  /** The live term, or `undefined` when not leading (same check as {@link isLeader}). */
  get term(): LeaderTerm | undefined {
    return this.isLeader() ? this.current?.term : undefined;
  }

  /**
   * True only while a term is live by the local monotonic clock: re-checks the renew deadline
   * at call time, so a process paused past it (SIGSTOP, long GC) reads `false` even before its
   * step-down timer had a chance to run, and ends the term right there.
   */
  isLeader(): boolean {
    const active = this.current;
    return active !== undefined && this.withinRenewDeadline(active);
  }

  /**
   * Liveness, as client-go's `HealthzAdaptor`: unhealthy only when wedged — this candidate
   * still holds the Lease by its own account (it has not stepped down) but has not renewed it
   * for longer than leaseDuration + `toleranceMs`, i.e. its timers could not run and someone
   * else may lead now; or the election loop stopped unexpectedly (an internal error, or
   * `onLost: 'stop'` after a loss — client-go's process would have exited). A term that ended
   * and is draining (`onStoppedLeading` still running, however long, e.g. after an API
   * outage) is healthy: the work is the application's, the election is fine. Not started and
   * stopped electors are healthy.
   * @param toleranceMs - extra time past lease expiry to tolerate, in ms; default 0
   */
  health(toleranceMs = 0): LeaderElectionHealth {
    const lock = this.lock.description;
    if (this.state === 'failed') {
      return { healthy: false, reason: healthMessages.loopFailed(lock, this.loopError) };
    }
    if (this.state === 'lost') {
      return { healthy: false, reason: healthMessages.stoppedAfterLoss(lock) };
    }
    const active = this.current;
    if (active && !active.holding.signal.aborted) {
      const sinceRenewMs = this.clock.nowMs() - active.lastRenewStartMs;
      if (sinceRenewMs > this.config.leaseDurationMs + toleranceMs) {
        const reason = healthMessages.leaseExpired(
          lock,
          sinceRenewMs,
          this.config.leaseDurationMs,
          toleranceMs,
        );
        return { healthy: false, reason };
      }
    }
    return { healthy: true };
  }

  /**
   * Starts campaigning in the background and returns at once. Errors are logged, never
   * thrown or left as unhandled rejections. Calling it while running does nothing.
   * @throws LeaderElectionError if the elector was stopped (create a new one instead).
   */
  start(): void {
    if (this.state === 'running') return;
    if (this.state !== 'new' && this.state !== 'lost') {
      throw new LeaderElectionError(electionMessages.stoppedNotStartable());
    }
    this.state = 'running';
    const controller = new AbortController();
    this.runController = controller;
    this.loop = this.run(controller.signal).catch((error: unknown) => this.fail(error));
  }

  /**
   * Stops campaigning: ends the term if any (aborts its signal, awaits `onStoppedLeading`
   * while the Lease is still renewed, so no one takes over under draining work),
   * then, with `releaseOnStop`, clears the holder of the Lease if it still names us so a
   * follower takes over at once. Resolves when done; never rejects. Idempotent.
   * Waits as long as `onStoppedLeading` does, so keep that drain bounded.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    if (this.state === 'running') this.state = 'stopping';
    // End the term and drain its work while the Lease is still renewed, so nobody else can
    // take over under work that is still running; then stop campaigning and release.
    await this.endTerm();
    this.runController?.abort();
    await this.loop;
    if (this.config.releaseOnStop) await this.release();
    this.state = 'stopped';
  }

  // --- Run: acquire, renew until the term ends, then campaign again or stop ----------------

  private async run(signal: AbortSignal): Promise<void> {
    this.logger.info(electionMessages.started(this.identity, this.lock.description));
    while (!signal.aborted) {
      if (!(await this.acquire(signal))) return;
      await this.renew(signal);
      await this.endTerm();
      if (signal.aborted) return;
      if (this.config.onLost === 'stop') {
        this.state = 'lost';
        this.logger.warn(electionMessages.stoppedAfterLoss(this.lock.description));
        return;
      }
      this.logger.info(electionMessages.recampaign(this.lock.description));
    }
  }

  private async fail(error: unknown): Promise<void> {
    try {
      this.state = 'failed';
      this.loopError = error;
      this.logger.error(electionMessages.loopFailed(this.lock.description, error));
      if (this.current) this.abortTerm(this.current, 'election-failed');
      await this.endTerm();
    } catch {
      // Nothing left to report to; never surface as an unhandled rejection.
    }
  }

  // --- Acquire: try every retryPeriod × [1, 1.2) — or, watching, when the Lease is released
  // or would expire — until we lead ----------------------------------------------------------

  private async acquire(signal: AbortSignal): Promise<boolean> {
    const following = new AbortController();
    const followingSignal = AbortSignal.any([signal, following.signal]);
    let watching = false;
    try {
      for (;;) {
        if (!this.canSkipAttempt()) {
          // No change delivered for a whole leaseDuration: a read now also tests the watch.
          const testsWatch = this.following.healthy && this.observedExpired();
          const observedAtMs = this.observed?.observedAtMs;
          this.deletionSeen = false;
          const attempt = await this.tryAcquireOrRenew(signal, undefined);
          if (signal.aborted) return false;
          if (attempt.outcome !== 'failed') this.failures.recovered(this.lock.description);
          if (attempt.outcome === 'leading' && !this.lateAcquisition(attempt.writeStartedMs)) {
            this.beginTerm(attempt.writeStartedMs);
            return true;
          }
          // Watch once the Lease could be read: from its version, and not with credentials
          // that cannot even read it (their error is reported once, by the read).
          if (!watching && attempt.outcome === 'held-by-other') {
            watching = true;
            this.following.start(followingSignal);
          }
          if (testsWatch && this.observed?.observedAtMs !== observedAtMs) {
            this.following.missedChange();
          }
        }
        await this.following.sleep(this.followerDelayMs(), signal);
        if (signal.aborted) return false;
      }
    } finally {
      following.abort();
    }
  }

  /**
   * With a healthy watch, a follower need not read a Lease that is held and has not expired by
   * its observation: every renewal arrives as an event.
   */
  private canSkipAttempt(): boolean {
    const holder = this.observed?.record.holderIdentity;
    return (
      this.following.healthy &&
      !this.deletionSeen &&
      holder !== undefined &&
      holder !== '' &&
      holder !== this.identity &&
      this.observed?.holderLiveness?.state !== 'gone' &&
      !this.observedExpired()
    );
  }

  /** How long a follower waits before it looks again (an event may wake it sooner). */
  private followerDelayMs(): number {
    const jitteredMs = this.config.retryPeriodMs * (1 + ACQUIRE_JITTER * this.config.random());
    // Wake when the holder's lease expires by our observation rather than up to a retry
    // period later: failover after a crash costs leaseDuration, not leaseDuration + retry.
    const untilExpiryMs = this.msUntilObservedExpiry();
    if (this.following.healthy && this.canSkipAttempt()) return untilExpiryMs + 1;
    return untilExpiryMs > 0 ? Math.min(jitteredMs, untilExpiryMs + 1) : jitteredMs;
  }

  /**
   * True when the acquiring write's answer is handled renewDeadline or more after the write
   * was sent (a pause, a blocked event loop): the term would end the moment it began, and by
   * then another candidate may hold a newer one, so it is not begun at all — no
   * `onStartedLeading`, no observer call. The Lease still names us with that term; the next
   * attempt takes it with a new term if nobody else did (client-go would start it and let
   * its renew loop end it).
   */
  private lateAcquisition(writeStartedMs: number): boolean {
    const elapsedMs = this.clock.nowMs() - writeStartedMs;
    if (elapsedMs < this.config.renewDeadlineMs) return false;
    this.logger.warn(
      electionMessages.lateAcquisition(
        this.lock.description,
        this.observed!.record.leaseTransitions,
        elapsedMs,
        this.config.renewDeadlineMs,
      ),
    );
    return true;
  }

  private beginTerm(writeStartedMs: number): void {
    const record = this.observed!.record;
    const controller = new AbortController();
    // `active` is assigned below; the term's checks only run once it is.
    // eslint-disable-next-line prefer-const
    let active: ActiveTerm;
    const isLive = (): boolean => this.withinRenewDeadline(active);
    const signal = controller.signal;
    // Reading `aborted` (or `throwIfAborted()`) re-checks the deadline: code that only looks
    // at the signal after a pause must not see "not aborted" before our timer had a chance.
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
    const term: LeaderTerm = Object.freeze({
      leaseTransitions: record.leaseTransitions,
      acquiredAt: new Date((record.acquireTime ?? this.clock.wallNow()).getTime()),
      signal,
      isLive,
      throwIfEnded: (): void => {
        if (!isLive()) throw signal.reason;
      },
    });
    active = {
      term,
      startedMs: writeStartedMs,
      controller,
      holding: new AbortController(),
      lastRenewStartMs: writeStartedMs,
    };
    this.current = active;
    this.sharedIdentitySuspected = false;
    this.scheduleStepDown(active);
    this.logger.info(
      electionMessages.startedLeading(this.identity, this.lock.description, term.leaseTransitions),
    );
    this.notify((o, e) => o.termStarted?.({ ...e, term }));
    this.invoke('onStartedLeading', () => this.config.callbacks.onStartedLeading?.(term));
  }

  // --- Renew: every retryPeriod; step down when renewDeadline passes without success -------

  /**
   * Renews until the Lease is lost or the run stops — also while a stopping term drains.
   * Attempts START every retryPeriod (a fixed cadence, not retryPeriod after the previous
   * answer), one at a time: a request slower than retryPeriod is followed at once by the next.
   */
  private async renew(signal: AbortSignal): Promise<void> {
    const active = this.current!;
    const live = AbortSignal.any([signal, active.holding.signal]);
    let nextStartMs = active.lastRenewStartMs + this.config.retryPeriodMs;
    while (!live.aborted) {
      await this.clock.sleep(Math.max(0, nextStartMs - this.clock.nowMs()), live);
      if (live.aborted) return;
      if (this.renewDeadlinePassed(active)) return this.stepDown(active);
      nextStartMs = this.clock.nowMs() + this.config.retryPeriodMs;
      const attempt = await this.tryAcquireOrRenew(live, active);
      if (live.aborted) return;
      if (attempt.outcome !== 'failed') this.failures.recovered(this.lock.description);
      if (attempt.outcome === 'leading') {
        active.lastRenewStartMs = Math.max(active.lastRenewStartMs, attempt.writeStartedMs);
        if (!active.controller.signal.aborted) this.scheduleStepDown(active);
        this.notify((o, e) => o.renewed?.({ ...e, term: active.term }));
      } else if (attempt.outcome === 'held-by-other') {
        this.abortTerm(active, 'lease-taken-over');
      } else if (attempt.outcome === 'lease-deleted') {
        this.abortTerm(active, 'lease-deleted');
      }
      // 'failed': retry at the next start until the step-down timer ends the term.
    }
  }

  /** The step-down deadline is a local timer: a hung request cannot keep us leader. */
  private scheduleStepDown(active: ActiveTerm): void {
    active.stepDownTimer?.cancel();
    const dueInMs = active.lastRenewStartMs + this.config.renewDeadlineMs - this.clock.nowMs();
    active.stepDownTimer = this.clock.setTimer(dueInMs, () => {
      if (this.withinRenewDeadline(active)) this.scheduleStepDown(active);
    });
  }

  /** True while `active` is live; ends it if its renew deadline has passed. */
  private withinRenewDeadline(active: ActiveTerm): boolean {
    if (nativeAborted.call(active.controller.signal)) return false;
    if (!this.renewDeadlinePassed(active)) return true;
    this.stepDown(active);
    return false;
  }

  private renewDeadlinePassed(active: ActiveTerm): boolean {
    return this.clock.nowMs() - active.lastRenewStartMs >= this.config.renewDeadlineMs;
  }

  private stepDown(active: ActiveTerm): void {
    this.logger.warn(
      electionMessages.renewDeadlineExceeded(this.lock.description, this.config.renewDeadlineMs),
    );
    this.abortTerm(active, 'renew-deadline-exceeded');
  }

  /** The Lease is no longer ours: end the term (if not yet) and stop renewing. */
  private abortTerm(active: ActiveTerm, reason: LeaderTermEndReason): void {
    this.endTermSignal(active, reason);
    active.holding.abort();
  }

  private endTermSignal(active: ActiveTerm, reason: LeaderTermEndReason): void {
    active.stepDownTimer?.cancel();
    if (nativeAborted.call(active.controller.signal)) return;
    active.controller.abort(new LeaderTermEndedError(reason, active.term.leaseTransitions));
    const durationMs = this.clock.nowMs() - active.startedMs;
    this.notify((o, e) => o.termEnded?.({ ...e, term: active.term, reason, durationMs }));
  }

  /**
   * Ends the current term, if any: aborts its signal (if not yet; the Lease keeps being
   * renewed unless it was lost), then awaits `onStoppedLeading` (the drain). Idempotent: every
   * caller awaits the same drain.
   */
  private endTerm(): Promise<void> {
    const active = this.current;
    if (!active) return Promise.resolve();
    active.ending ??= this.drainTerm(active);
    return active.ending;
  }

  private async drainTerm(active: ActiveTerm): Promise<void> {
    this.endTermSignal(active, 'stopped');
    const reason = (active.controller.signal.reason as LeaderTermEndedError).reason;
    this.logger.info(electionMessages.stoppedLeading(this.identity, this.lock.description, reason));
    await this.invokeAndWait('onStoppedLeading', () =>
      this.config.callbacks.onStoppedLeading?.(active.term),
    );
    if (this.current === active) this.current = undefined;
  }

  // --- tryAcquireOrRenew: one attempt, optimistic concurrency on the record's version ------

  /**
   * One attempt to acquire (`active` undefined) or renew (`active` = our live term), as
   * client-go's `tryAcquireOrRenew`. Remote times are never compared with ours.
   */
  private async tryAcquireOrRenew(
    signal: AbortSignal,
    active: ActiveTerm | undefined,
  ): Promise<Attempt> {
    const now = this.clock.wallNow();
    const leaseDurationSeconds = this.config.leaseDurationMs / 1000;

    // 1. Fast path: the leader writes over the version it last saw, without a GET.
    const cached = this.observed;
    if (active && cached?.record.holderIdentity === this.identity) {
      const renewed = this.withScheduleLedger({
        ...cached.record,
        renewTime: now,
        leaseDurationSeconds,
      });
      const writeStartedMs = this.clock.nowMs();
      try {
        const version = await this.call(
          'update',
          (s) => this.lock.update(renewed, cached.version, s),
          signal,
        );
        this.recordWrite(renewed, version);
        return { outcome: 'leading', writeStartedMs };
      } catch (error) {
        if (signal.aborted) return FAILED;
        if (isNotFound(error)) {
          this.logger.warn(electionMessages.leaseDeleted(this.lock.description));
          return LEASE_DELETED;
        }
        this.reportFailure('update', error, signal);
      }
      this.notify((o, e) => o.renewSlowPath?.(e));
    }

    // 2. Read the record.
    let current: VersionedLeaseRecord | undefined;
    try {
      current = await this.call('get', (s) => this.lock.get(s), signal);
    } catch (error) {
      this.reportFailure('get', error, signal);
      return FAILED;
    }
    if (!current) return this.recreate(active, now, leaseDurationSeconds, signal);
    this.missingReported = false;
    this.missingSinceMs = undefined;

    // 3. Judge the record by when WE saw it change.
    const renewedSinceLastRead =
      this.observed !== undefined && !sameElectionRecord(this.observed.record, current.record);
    this.observe(current);
    const record = current.record;
    if (active) {
      if (record.holderIdentity !== this.identity) {
        this.logger.warn(electionMessages.takenOver(this.lock.description, record.holderIdentity));
        return HELD_BY_OTHER;
      }
      if (record.leaseTransitions !== active.term.leaseTransitions) {
        // Someone else took the Lease under our identity: yield to it, and from now on treat
        // a Lease naming us as theirs until it expires, rather than fight over it.
        this.logger.warn(electionMessages.duplicateIdentity(this.lock.description, this.identity));
        this.sharedIdentitySuspected = true;
        return HELD_BY_OTHER;
      }
    } else {
      // A Lease naming us that we did not write (a restarted process, or a second process
      // with our identity) is someone else's until it expires by our observation: taking it
      // back at once, as client-go does, lets two live namesakes lead together.
      const ours =
        record.holderIdentity === this.identity &&
        !this.sharedIdentitySuspected &&
        record.leaseTransitions === this.ownTransitions;
      const heldByOther = record.holderIdentity !== '' && !ours;
      if (heldByOther && !this.observedExpired() && !this.holderProvenGone(current)) {
        if (record.holderIdentity === this.identity && renewedSinceLastRead) {
          this.suspectNamesake();
        }
        return HELD_BY_OTHER;
      }
    }

    // 4. Renew (keep acquireTime and leaseTransitions) or take over (a new term).
    const next: LeaseRecord = active
      ? { ...record, leaseDurationSeconds, renewTime: now, acquireTime: record.acquireTime ?? now }
      : {
          ...record,
          holderIdentity: this.identity,
          leaseDurationSeconds,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: this.nextTransitions(record.leaseTransitions),
        };
    return this.write('update', this.withScheduleLedger(next), current.version, signal, active);
  }

  /**
   * `record` with the ledger text from the `scheduleLedger` option (see
   * {@link LeaderElectorOptions.scheduleLedger}); unchanged without one, or when it throws.
   */
  private withScheduleLedger(record: LeaseRecord): LeaseRecord {
    const writer = this.config.scheduleLedger;
    if (writer === undefined) return record;
    let text: string | undefined;
    try {
      text = writer(record.scheduleLedger, record.leaseTransitions);
    } catch (error) {
      this.logger.warn(electionMessages.scheduleLedgerFailed(this.lock.description, error));
      return record;
    }
    return text === undefined ? record : { ...record, scheduleLedger: text };
  }

  /**
   * True when the lock proves the holder's process gone (a `FileLock` on the holder's host:
   * see `HolderLiveness`): the record may be taken at once, since no process can renew it any
   * more. When the lock can check holders but not this one (`unknown`), says once per holder
   * and term whom it waits for and until when (by this candidate's observation).
   */
  private holderProvenGone(current: VersionedLeaseRecord): boolean {
    const liveness = current.holderLiveness;
    const { holderIdentity, leaseTransitions } = current.record;
    if (liveness?.state === 'gone') {
      this.logger.info(
        followerMessages.holderGone(this.lock.description, holderIdentity, liveness.proof),
      );
      return true;
    }
    const key = `${holderIdentity} ${leaseTransitions}`;
    if (liveness?.state === 'unknown' && this.waitReported !== key) {
      this.waitReported = key;
      const until = new Date(this.clock.wallNow().getTime() + this.msUntilObservedExpiry());
      this.logger.info(
        followerMessages.waitingForHolder(
          this.lock.description,
          holderIdentity,
          until,
          liveness.reason,
        ),
      );
    }
    return false;
  }

  /** Another live process writes the Lease under our identity: warn once, and keep off it. */
  private suspectNamesake(): void {
    if (this.sharedIdentitySuspected) return;
    this.sharedIdentitySuspected = true;
    this.logger.warn(electionMessages.namesakeHolds(this.lock.description, this.identity));
  }

  /**
   * The Lease does not exist. The leader steps down at once (someone deleted it under us).
   * A candidate that saw a live holder waits until that record would have expired by its
   * observation, as if it could not read the Lease: the holder may not have noticed yet.
   * Then (or at once, if it never saw one, as client-go does) it creates the Lease,
   * continuing from the highest leaseTransitions it has seen.
   */
  private recreate(
    active: ActiveTerm | undefined,
    now: Date,
    leaseDurationSeconds: number,
    signal: AbortSignal,
  ): Promise<Attempt> | Attempt {
    if (active) {
      this.logger.warn(electionMessages.leaseDeleted(this.lock.description));
      return LEASE_DELETED;
    }
    const waitMs = this.msUntilMissingLeaseMayBeCreated();
    if (waitMs > 0) {
      if (!this.missingReported) {
        this.missingReported = true;
        const holder = this.observed!.record.holderIdentity;
        this.logger.info(electionMessages.leaseMissing(this.lock.description, holder, waitMs));
      }
      return HELD_BY_OTHER;
    }
    const created: LeaseRecord = this.withScheduleLedger({
      holderIdentity: this.identity,
      leaseDurationSeconds,
      acquireTime: now,
      renewTime: now,
      leaseTransitions:
        this.highestTransitions === undefined ? 0 : this.nextTransitions(this.highestTransitions),
    });
    return this.write('create', created, undefined, signal, undefined);
  }

  private async write(
    operation: 'create' | 'update',
    record: LeaseRecord,
    version: string | undefined,
    signal: AbortSignal,
    active: ActiveTerm | undefined,
  ): Promise<Attempt> {
    // Before sending: the write may succeed even if we never see the answer.
    const previousOwn = this.ownTransitions;
    this.ownTransitions = record.leaseTransitions;
    const writeStartedMs = this.clock.nowMs();
    try {
      const written = await this.call(
        operation,
        (s) =>
          operation === 'create'
            ? this.lock.create(record, s)
            : this.lock.update(record, version!, s),
        signal,
      );
      this.recordWrite(record, written);
      return { outcome: 'leading', writeStartedMs };
    } catch (error) {
      // A conflict means this write did not happen: a record at these transitions is not ours
      // (it may be a namesake's that won the race).
      if (error instanceof LockConflictError) this.ownTransitions = previousOwn;
      if (active && !signal.aborted && isNotFound(error)) {
        this.logger.warn(electionMessages.leaseDeleted(this.lock.description));
        return LEASE_DELETED;
      }
      this.reportFailure(operation, error, signal);
      return FAILED;
    }
  }

  /** leaseTransitions + 1 for a new term, wrapping to 0 past the int32 maximum (logged). */
  private nextTransitions(value: number): number {
    const valid = validTransitions(value);
    if (valid < MAX_LEASE_TRANSITIONS) return valid + 1;
    this.logger.warn(electionMessages.transitionsWrapped(this.lock.description, valid));
    return 0;
  }

  /** Expired when leaseDuration has passed on OUR clock since we saw the record change. */
  private observedExpired(): boolean {
    return this.msUntilObservedExpiry() <= 0;
  }

  /**
   * How long a candidate that found the Lease missing waits before creating it, ms (≤ 0: now).
   * One that never saw a record cannot know there was a leader: 0, as client-go. One that saw
   * a record waits until that record would have expired by its observation AND a full
   * leaseDuration since it first found the Lease missing: its last sighting may be stale (it
   * was cut off from the API server while someone else took over), and a leader still
   * renewing notices the deletion, and stops, within that time.
   */
  private msUntilMissingLeaseMayBeCreated(): number {
    if (!this.observed) return 0;
    const nowMs = this.clock.nowMs();
    this.missingSinceMs ??= nowMs;
    const observedExpiryMs = this.msUntilObservedExpiry();
    const sinceMissingMs = this.missingSinceMs + this.config.leaseDurationMs - nowMs;
    return Math.max(Number.isFinite(observedExpiryMs) ? observedExpiryMs : 0, sinceMissingMs);
  }

  /**
   * Ms until the observed record expires by our clock (≤ 0: expired); +Infinity when there is
   * nothing to wait for (no record seen yet, or it is free).
   */
  private msUntilObservedExpiry(): number {
    if (!this.observed || this.observed.record.holderIdentity === '') return Infinity;
    const { record, observedAtMs } = this.observed;
    const seconds =
      Number.isFinite(record.leaseDurationSeconds) && record.leaseDurationSeconds > 0
        ? record.leaseDurationSeconds
        : this.config.leaseDurationMs / 1000;
    return observedAtMs + seconds * 1000 - this.clock.nowMs();
  }

  /**
   * Remembers `current`; the observed time moves only when the election record changed
   * (holder, acquire/renew time, duration, transitions), as client-go compares the record:
   * a label or annotation written by someone else bumps the version, not the lease.
   */
  private observe(current: VersionedLeaseRecord): void {
    const previous = this.observed;
    const changed = !previous || !sameElectionRecord(previous.record, current.record);
    this.observed = {
      record: copyLeaseRecord(current.record),
      version: current.version,
      observedAtMs: changed ? this.clock.nowMs() : previous.observedAtMs,
      holderLiveness: current.holderLiveness,
    };
    const transitions = validTransitions(current.record.leaseTransitions);
    this.highestTransitions = Math.max(this.highestTransitions ?? 0, transitions);
    this.reportLeader(current.record);
  }

  private recordWrite(record: LeaseRecord, version: string): void {
    this.observe({ record, version });
  }

  private reportLeader(record: LeaseRecord): void {
    const holder = record.holderIdentity;
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    const leaseTransitions = record.leaseTransitions;
    this.notify((o, e) => o.leaderObserved?.({ ...e, holderIdentity: holder, leaseTransitions }));
    if (holder === '') return;
    this.logger.info(electionMessages.newLeader(holder, this.lock.description));
    this.invoke('onNewLeader', () => this.config.callbacks.onNewLeader?.(holder));
  }

  // --- Release: hand the Lease over at once on stop ----------------------------------------

  /**
   * As client-go's `release`, but re-reads first: clears the holder only if the Lease still
   * names us at the transitions we wrote, keeping leaseTransitions; re-reads on conflict.
   */
  private async release(): Promise<void> {
    if (this.ownTransitions === undefined) return;
    const { signal, dispose } = timeoutSignal(this.clock, this.config.renewDeadlineMs);
    try {
      for (let attempt = 1; attempt <= MAX_RELEASE_ATTEMPTS; attempt++) {
        const current = await this.call('get', (s) => this.lock.get(s), signal);
        if (!current) return;
        this.observe(current);
        const { record } = current;
        if (
          record.holderIdentity !== this.identity ||
          record.leaseTransitions !== this.ownTransitions
        ) {
          this.logger.debug(
            electionMessages.releaseSkipped(this.lock.description, record.holderIdentity),
          );
          return;
        }
        const now = this.clock.wallNow();
        const released = this.withScheduleLedger({
          ...record,
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
        });
        try {
          const version = await this.call(
            'update',
            (s) => this.lock.update(released, current.version, s),
            signal,
          );
          this.recordWrite(released, version);
          this.logger.info(electionMessages.released(this.identity, this.lock.description));
          return;
        } catch (error) {
          if (!(error instanceof LockConflictError) || attempt === MAX_RELEASE_ATTEMPTS)
            throw error;
        }
      }
    } catch (error) {
      this.logger.warn(electionMessages.releaseFailed(this.lock.description, error));
    } finally {
      dispose();
    }
  }

  // --- Plumbing ------------------------------------------------------------------------------

  /**
   * Calls the lock with the per-request timeout, max(1 s, renewDeadline / 2), and reports
   * the request (verb, outcome, latency) to the observer.
   */
  private async call<T>(
    operation: LockOperation,
    request: (signal: AbortSignal) => Promise<T>,
    parent: AbortSignal,
  ): Promise<T> {
    const { signal, dispose } = timeoutSignal(this.clock, this.config.requestTimeoutMs, parent);
    const startedMs = this.clock.nowMs();
    let outcome: LockRequestOutcome = 'success';
    try {
      const result = await abortable(request(signal), signal);
      if (result === undefined && operation === 'get') outcome = 'not-found';
      this.workedOperations.add(operation);
      this.deniedSinceMs.delete(operation);
      return result;
    } catch (error) {
      outcome = requestOutcome(error, signal, parent);
      throw error;
    } finally {
      dispose();
      const durationMs = this.clock.nowMs() - startedMs;
      this.notify((o, e) => o.lockRequest?.({ ...e, operation, outcome, durationMs }));
    }
  }

  /**
   * Conflicts are normal races (debug); other failures are logged rate-limited. Nothing is
   * logged when `signal` (the term or the run, not the request timeout) was aborted. A 403 on
   * a verb that worked before with these credentials is a warning for
   * {@link ACCESS_DENIED_GRACE_MS} (a restarted API server's RBAC cache), then an error with
   * the RBAC hint; a 403 on a verb that never worked is an error at once.
   */
  private reportFailure(operation: LockOperation, error: unknown, signal: AbortSignal): void {
    if (signal.aborted) return;
    const message = electionMessages.lockOperationFailed(operation, this.lock.description, error);
    if (error instanceof LockConflictError) {
      this.logger.debug(message);
      return;
    }
    const kind =
      error instanceof KubernetesApiError
        ? error.kind
        : error instanceof Error
          ? error.name
          : 'unknown';
    if (kind === 'forbidden' && this.workedOperations.has(operation)) {
      const nowMs = this.clock.nowMs();
      const sinceMs = this.deniedSinceMs.get(operation) ?? nowMs;
      this.deniedSinceMs.set(operation, sinceMs);
      if (nowMs - sinceMs < ACCESS_DENIED_GRACE_MS) {
        const grace = electionMessages.accessDeniedAfterSuccess(
          operation,
          this.lock.description,
          ACCESS_DENIED_GRACE_MS,
        );
        this.failures.report(`${operation}:${kind}:grace`, 'warn', grace);
        return;
      }
    }
    const configurationProblem = error instanceof KubernetesApiError && !error.transient;
    this.failures.report(`${operation}:${kind}`, configurationProblem ? 'error' : 'warn', message);
  }

  /** Calls the observer; whatever it throws is ignored (an observer never breaks an election). */
  private notify(call: (observer: ElectionObserver, event: ElectionObservation) => void): void {
    try {
      call(this.observer, { election: this.name, identity: this.identity });
    } catch {
      // Ignored by contract: see ElectionObserver.
    }
  }

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

  private async invokeAndWait(callback: string, run: () => unknown): Promise<void> {
    try {
      await run();
    } catch (error) {
      this.logger.error(electionMessages.callbackFailed(callback, error));
    }
  }
}

/** A non-negative integer within the int32 range: negative or malformed → 0, too large → the max. */
function validTransitions(value: number): number {
  if (!Number.isFinite(value) || value < 0) return 0;
  return Math.min(Math.floor(value), MAX_LEASE_TRANSITIONS);
}

/** A write or read of a record that no longer exists (HTTP 404 on PUT). */
function isNotFound(error: unknown): boolean {
  return error instanceof KubernetesApiError && error.kind === 'not-found';
}

/** How a failed lock request ended, for the observer. */
function requestOutcome(
  error: unknown,
  request: AbortSignal,
  parent: AbortSignal,
): LockRequestOutcome {
  if (error instanceof LockConflictError) return 'conflict';
  if (error instanceof KubernetesApiError) return error.kind;
  if (parent.aborted) return 'aborted';
  if (request.aborted) return 'timeout';
  return 'unknown';
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}
