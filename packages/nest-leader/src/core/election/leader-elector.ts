/**
 * The election algorithm, as client-go's `tools/leaderelection` (`Run` → `acquire` →
 * `renew` → `release`, `tryAcquireOrRenew`), reading top to bottom. Framework-free.
 */

import { LeaderElectionError, LockConflictError } from '../../errors.js';
import type { LeaseRecord, ResourceLock, VersionedLeaseRecord } from '../../locks/resource-lock.js';
import type { CandidateAdvertisement } from '../handoff/candidate-advertisement.js';
import { MAX_ADVERTISED_CANDIDATES } from '../handoff/candidate-preference.js';
import type { Clock } from '../clock.js';
import type { CandidacySession } from '../handoff/coordinated-election.js';
import type { ElectionNotifier } from './election-notifier.js';
import type { LeadershipChangeReason } from '../election-observer.js';
import { electionMessages } from '../election.messages.js';
import { offerMessages } from '../handoff/handoff-offer.messages.js';
import type { HolderChecks } from './holder-checks.js';
import { checkElectionHealth, type LeaderElectionHealth } from './leader-elector.health.js';
import {
  ACQUIRE_JITTER,
  type ElectionLogger,
  type LeaderElectorOptions,
  type LeaderTerm,
  resolveLeaderElectorOptions,
  type ResolvedLeaderElectorOptions,
} from '../leader-elector.options.js';
import { assembleLeaderElector } from './leader-elector.parts.js';
import { LeaderTermLifetime } from '../leader-term.js';
import {
  acquisitionReason,
  type TransferLeadershipOptions,
} from '../handoff/leadership-handoff.js';
import type { LeadershipHandoffSession } from '../handoff/leadership-handoff.session.js';
import { isNotFound, type LockFailureReporter } from './lock-failure.reporter.js';
import type { LockRequests } from './lock-requests.js';
import type { LockWatchSession } from './lock-watch.session.js';
import type { ObservedRecord } from './observed-record.js';
import type { ScheduleLedgerStamp } from '../schedule-ledger/schedule-ledger.stamp.js';
import type { StopHandover } from '../handoff/stop-handover.js';
import { createdRecord, renewalRecord, takeoverRecord, type TermWrite } from './term-records.js';

/**
 * What one tryAcquireOrRenew did; `writeStartedMs`: when the winning write was sent; `reason`:
 * why an acquisition's term begins (renewals have none).
 */
type Attempt =
  | { outcome: 'leading'; writeStartedMs: number; reason?: LeadershipChangeReason }
  | { outcome: 'held-by-other' | 'lease-deleted' | 'failed' };

const HELD_BY_OTHER: Attempt = { outcome: 'held-by-other' };
const LEASE_DELETED: Attempt = { outcome: 'lease-deleted' };
const FAILED: Attempt = { outcome: 'failed' };

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
 * fencing token (see the safety section of the package's docs/elections.md for the limits).
 *
 * A leader whose Lease names another candidate as `spec.preferredHolder` hands it over as
 * {@link LeaderElector.transferLeadership} does (client-go honours it only in coordinated
 * mode, by no longer renewing). With the `coordinated` option the candidate takes part in
 * Kubernetes' coordinated leader election instead of taking the Lease itself (see
 * `LeaderElectorOptions.coordinated`).
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
  // The parts besides the algorithm (documented in leader-elector.parts.ts).
  private readonly notifier: ElectionNotifier;
  private readonly failures: LockFailureReporter;
  private readonly requests: LockRequests;
  private readonly following: LockWatchSession;
  private readonly observed: ObservedRecord;
  private readonly withScheduleLedger: ScheduleLedgerStamp;
  private readonly holders: HolderChecks;
  private readonly handoffs: LeadershipHandoffSession;
  private readonly advertisement: CandidateAdvertisement | undefined;
  private readonly stopWrites: StopHandover;
  private readonly candidacy: CandidacySession;
  private readonly observe: (current: VersionedLeaseRecord) => void;
  private readonly nextTransitions: (value: number) => number;
  private current: LeaderTermLifetime | undefined;
  /** leaseTransitions of our last attempted write naming us: what `release` may clear. */
  private ownTransitions: number | undefined;
  private state: 'new' | 'running' | 'stopping' | 'stopped' | 'lost' | 'failed' = 'new';
  private loopError: unknown;
  private runController: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  /** The advertisement's write started by `start()`. */
  private advertising: Promise<void> | undefined;
  /** The advertisement's first write is done (written, or given up). */
  private advertisingDone = false;
  /** Monotonic ms before which a missing advertisement is not added again. */
  private readvertiseAfterMs = -Infinity;

  /**
   * Validates the options once (as client-go's `NewLeaderElector`); does not touch the lock.
   * @throws InvalidLeaderElectionOptionError naming the option and the rule it breaks
   *   (including unknown option names, with the closest known one).
   */
  constructor(options: LeaderElectorOptions) {
    const config = resolveLeaderElectorOptions(options);
    this.config = config;
    ({ identity: this.identity, name: this.name, lock: this.lock } = config);
    ({ clock: this.clock, logger: this.logger } = config);
    ({
      notifier: this.notifier,
      failures: this.failures,
      requests: this.requests,
      following: this.following,
      observed: this.observed,
      withScheduleLedger: this.withScheduleLedger,
      holders: this.holders,
      handoffs: this.handoffs,
      advertisement: this.advertisement,
      stopWrites: this.stopWrites,
      candidacy: this.candidacy,
      observe: this.observe,
      nextTransitions: this.nextTransitions,
    } = assembleLeaderElector(config, () => this.endTerm()));
  }

  /** The observed holder of the lock, or `undefined` if it is free or not read yet. */
  get leader(): string | undefined {
    return this.observed.record?.holderIdentity || undefined;
  }

  /**
   * `leaseTransitions` of the record as last observed, whoever holds it (followers too), or
   * `undefined` before the first successful read.
   */
  get leaseTransitions(): number | undefined {
    return this.observed.record?.leaseTransitions;
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
    return active !== undefined && active.isLive();
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
    return checkElectionHealth(
      {
        lock: this.lock.description,
        state: this.state,
        loopError: this.loopError,
        term: this.current,
        nowMs: this.clock.nowMs(),
        leaseDurationMs: this.config.leaseDurationMs,
      },
      toleranceMs,
    );
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
    this.candidacy.start();
    this.loop = this.run(controller.signal).catch((error: unknown) => this.fail(error));
    this.advertisingDone = false;
    this.advertising = this.advertisement
      ?.advertise(controller.signal)
      .finally(() => (this.advertisingDone = true));
  }

  /**
   * Stops campaigning. A leader with a `podTemplateHash` and `handoffOnStop` first leads on —
   * renewing, its term running — for at most `newerTemplateWaitSeconds` (default renewDeadline) while others advertise
   * themselves but none of a newer pod template (a rollout's new pods may still be starting; see
   * `StopHandover.awaitNewerTemplate`). Then it ends the term, if any, and awaits
   * `onStoppedLeading` while the Lease is still renewed (nobody takes over under draining work);
   * then, with `releaseOnStop`, if the Lease still names us, hands it to the preferred candidate
   * (`handoffOnStop`, as `transferLeadership()` without a target, in the read and write a release
   * costs; a failed handoff is followed by a release) or clears its holder so a follower takes
   * over at once; and removes this candidate's advertisement. Each step is bounded by
   * renewDeadline, except the drain: keep `onStoppedLeading` bounded. Resolves when done; never
   * rejects. Idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    let acceptedBy: string | undefined;
    const active = this.leading();
    if (active) {
      // Still leading and renewing: a rollout's new pods may not have advertised themselves,
      // and whoever is preferred must prove itself alive (accept an offer) before it is handed
      // the Lease.
      acceptedBy = await this.stopWrites.handOverWhileLeading(
        { leaseTransitions: active.term.leaseTransitions, isLive: () => this.leading() === active },
        () => this.observed.record,
      );
    }
    if (this.state === 'running') this.state = 'stopping';
    // End the term and drain its work while the Lease is still renewed, so nobody else can
    // take over under work that is still running; then stop campaigning and release.
    await this.endTerm();
    this.runController?.abort();
    await this.loop;
    await this.advertising;
    // Withdrawn before the handoff or release, so the election controller does not pick us again.
    await this.candidacy.stop();
    await this.stopWrites.finish(this.ownTransitions, acceptedBy);
    this.state = 'stopped';
  }

  /**
   * Hands leadership to the candidate `to` (targeted handoff): ends the term as `stop()` does
   * (signal reason `handed-off`; `onStoppedLeading` awaited while the Lease is still renewed),
   * stops renewing, then writes the Lease naming `to` with `leaseTransitions + 1`, the handoff's
   * bound as `leaseDurationSeconds` and a handoff marker (annotation `nest-leader/handoff`) — over
   * the version it reads, only if it still names this candidate at the term's `leaseTransitions`.
   * The target takes it at once (at its next read; at once when it watches); every other
   * candidate, nest-leader or client-go, waits out the bound, so a dead target costs exactly the
   * bound; fencing tokens strictly increase. The protocol and what client-go candidates see:
   * `leadership-handoff.ts` and "Targeted handoff" in the package's docs/handoff-and-rollouts.md.
   *
   * @param to - the identity of the candidate to hand leadership to (not this one); omit it to
   *   hand to the preferred candidate among those advertising themselves, read fresh before the
   *   term ends (as `preferredCandidate` orders them)
   * @param options - see {@link TransferLeadershipOptions}
   * @returns resolves once the handoff is written (not when the target has taken it)
   * @throws InvalidLeaderElectionOptionError (synchronously) if `to` is empty or this
   *   candidate, or `leaseDurationSeconds` is not a whole number ≥ 1 or exceeds this
   *   elector's leaseDuration.
   * @throws LeadershipTransferError `not-leader` (synchronously) without a live term or with a
   *   transfer under way; `no-candidate` (rejected, before the term ends; it goes on) without
   *   `to` when no other candidate advertises itself or the record cannot be read;
   *   `lease-lost` or `write-failed` (rejected, after the term ended and drained) — after
   *   `write-failed` the Lease still names this candidate, which takes it again with a new term.
   */
  transferLeadership(to?: string, options: TransferLeadershipOptions = {}): Promise<void> {
    return this.handoffs.transfer(to, options, this.leading);
  }

  /** The live term of a running elector (one that may hand it over), if any. */
  private readonly leading = (): LeaderTermLifetime | undefined => {
    const active = this.current;
    return active && this.isLeader() && this.state === 'running' ? active : undefined;
  };

  // --- Run: acquire, renew until the term ends, then campaign again or stop ----------------

  private async run(signal: AbortSignal): Promise<void> {
    // Debug: the Nest layer and the sidecar log their own start line, with every resolved option.
    this.logger.debug(electionMessages.started(this.identity, this.lock.description));
    while (!signal.aborted) {
      if (!(await this.acquire(signal))) return;
      const term = this.current!;
      await this.renew(signal);
      await this.endTerm();
      await this.handoffs.settled;
      if (signal.aborted) return;
      if (this.config.onLost === 'stop' && term.endReason !== 'handed-off') {
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
      this.current?.lose('election-failed');
      await this.endTerm();
    } catch {
      // Nothing left to report to; never surface as an unhandled rejection.
    }
  }

  // --- Acquire: try every retryPeriod × [1, 1.2) — or, watching, when the Lease is released
  // or would expire — until we lead ----------------------------------------------------------

  private async acquire(signal: AbortSignal): Promise<boolean> {
    try {
      for (;;) {
        if (!this.following.canSkipRead(this.observed, this.identity)) {
          const read = this.following.readStarting(this.observed);
          const attempt = await this.tryAcquireOrRenew(signal, undefined);
          if (signal.aborted) return false;
          if (attempt.outcome !== 'failed') this.failures.recovered();
          if (attempt.outcome === 'leading' && !this.lateAcquisition(attempt.writeStartedMs)) {
            this.beginTerm(attempt.writeStartedMs, attempt.reason ?? 'expired');
            return true;
          }
          const heldByOther = attempt.outcome === 'held-by-other';
          this.following.readDone(read, this.observed, heldByOther, signal);
        }
        // The leader offers us the Lease (we prove we are alive), or removed our advertisement.
        if (this.handoffs.offeredToUs(this.observed.record)) await this.handoffs.acceptOffer();
        else await this.readvertiseIfMissing(signal);
        if (signal.aborted) return false;
        const retryDelayMs = this.handoffs.nextReadDelayMs(
          this.observed.record,
          this.config.retryPeriodMs * (1 + ACQUIRE_JITTER * this.config.random()),
        );
        const delayMs = this.following.nextReadDelayMs(this.observed, this.identity, retryDelayMs);
        await this.following.sleep(delayMs, signal);
        if (signal.aborted) return false;
      }
    } finally {
      this.following.stopWatching();
    }
  }

  /**
   * A follower whose advertisement is gone from the record it last saw — a leader removed it
   * after an offer it answered too late, or a takeover of its own expired term did — adds it
   * again, when the list has room (never pushing out another's), at most once per leaseDuration.
   * Nothing to do in steady state: the check uses the record already seen.
   */
  private async readvertiseIfMissing(signal: AbortSignal): Promise<void> {
    const record = this.observed.record;
    const entry = this.advertisement?.entry;
    if (!entry || !record || !this.advertisingDone) return;
    const candidates = record.candidates ?? [];
    if (candidates.some((c) => c.identity === this.identity)) return;
    if (candidates.length >= MAX_ADVERTISED_CANDIDATES) return;
    if (this.clock.nowMs() < this.readvertiseAfterMs) return;
    this.readvertiseAfterMs = this.clock.nowMs() + this.config.leaseDurationMs;
    this.logger.info(offerMessages.readvertising(this.identity, this.lock.description));
    await this.advertisement!.advertise(signal);
  }

  /**
   * True when the acquiring write's answer comes renewDeadline or more after it was sent (a
   * pause, a blocked event loop): the term would end the moment it began and another may hold a
   * newer one, so it is not begun (no `onStartedLeading`); the next attempt takes the Lease with
   * a new term if nobody else did. client-go would start it and let its renew loop end it.
   */
  private lateAcquisition(writeStartedMs: number): boolean {
    const elapsedMs = this.clock.nowMs() - writeStartedMs;
    if (elapsedMs < this.config.renewDeadlineMs) return false;
    this.logger.warn(
      electionMessages.lateAcquisition(
        this.lock.description,
        this.observed.record!.leaseTransitions,
        elapsedMs,
        this.config.renewDeadlineMs,
      ),
    );
    return true;
  }

  /**
   * Begins a term on the record just written: its token and `acquireTime` from that record, its
   * first renew deadline counted from `writeStartedMs` (the step-down timer of `LeaderTermLifetime`).
   */
  private beginTerm(writeStartedMs: number, reason: LeadershipChangeReason): void {
    const record = this.observed.record!;
    const active: LeaderTermLifetime = new LeaderTermLifetime({
      leaseTransitions: record.leaseTransitions,
      acquiredAt: record.acquireTime ?? this.clock.wallNow(),
      startedMs: writeStartedMs,
      renewDeadlineMs: this.config.renewDeadlineMs,
      clock: this.clock,
      onRenewDeadlineExceeded: () => this.notifier.renewDeadlineExceeded(),
      onEnded: (endReason, durationMs) =>
        this.notifier.termEnded(active.term, endReason, durationMs),
    });
    this.current = active;
    this.holders.termBegan();
    this.notifier.startedLeading(active.term, reason);
    this.handoffs.handOverIfAsked(this.observed.record, this.leading);
  }

  // --- Renew: every retryPeriod; step down when renewDeadline passes without success -------

  /**
   * Renews until the Lease is lost or the run stops — also while a stopping term drains.
   * Attempts START every retryPeriod (a fixed cadence, not retryPeriod after the previous
   * answer), one at a time: a request slower than retryPeriod is followed at once by the next.
   */
  private async renew(signal: AbortSignal): Promise<void> {
    const active = this.current!;
    const live = AbortSignal.any([signal, active.holding]);
    let nextStartMs = active.lastRenewStartMs + this.config.retryPeriodMs;
    while (!live.aborted) {
      await this.clock.sleep(Math.max(0, nextStartMs - this.clock.nowMs()), live);
      if (live.aborted) return;
      if (active.renewDeadlinePassed()) return active.stepDown();
      nextStartMs = this.clock.nowMs() + this.config.retryPeriodMs;
      const attempt = await this.tryAcquireOrRenew(live, active);
      if (live.aborted) return;
      if (attempt.outcome !== 'failed') this.failures.recovered();
      if (attempt.outcome === 'leading') {
        active.renewed(attempt.writeStartedMs);
        this.notifier.renewed(active.term);
        this.handoffs.handOverIfAsked(this.observed.record, this.leading);
      } else if (attempt.outcome === 'held-by-other') {
        active.lose('lease-taken-over');
      } else if (attempt.outcome === 'lease-deleted') {
        active.lose('lease-deleted');
      }
      // 'failed': retry at the next start until the step-down timer ends the term.
    }
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

  private async drainTerm(active: LeaderTermLifetime): Promise<void> {
    active.end('stopped');
    await this.notifier.stoppedLeading(active.term, active.endReason!);
    if (this.current === active) this.current = undefined;
  }

  // --- tryAcquireOrRenew: one attempt, optimistic concurrency on the record's version ------

  /**
   * One attempt to acquire (`active` undefined) or renew (`active` = our live term), as
   * client-go's `tryAcquireOrRenew`. Remote times are never compared with ours.
   */
  private async tryAcquireOrRenew(
    signal: AbortSignal,
    active: LeaderTermLifetime | undefined,
  ): Promise<Attempt> {
    const write: TermWrite = {
      now: this.clock.wallNow(),
      leaseDurationSeconds: this.config.leaseDurationMs / 1000,
    };

    // 1. Fast path: the leader writes over the version it last saw, without a GET.
    const { record: cached, version: cachedVersion } = this.observed;
    if (active && cached?.holderIdentity === this.identity) {
      const renewed = this.withScheduleLedger(renewalRecord(cached, write));
      const writeStartedMs = this.clock.nowMs();
      try {
        const version = await this.requests.update(renewed, cachedVersion!, signal);
        this.observe({ record: renewed, version });
        return { outcome: 'leading', writeStartedMs };
      } catch (error) {
        if (signal.aborted) return FAILED;
        if (isNotFound(error)) return this.leaseDeleted();
        this.failures.failed('update', error, signal);
      }
      this.notifier.renewSlowPath();
    }

    // 2. Read the record.
    let current: VersionedLeaseRecord | undefined;
    try {
      current = await this.requests.get(signal);
    } catch (error) {
      this.failures.failed('get', error, signal);
      return FAILED;
    }
    if (!current) return this.recreate(active, write, signal);
    this.observed.leasePresent();

    // 3. Judge the record by when WE saw it change.
    const renewedSinceLastRead = this.observed.differsFrom(current.record);
    this.observe(current);
    const record = current.record;
    if (active) {
      if (record.holderIdentity !== this.identity) {
        this.logger.warn(electionMessages.takenOver(this.lock.description, record.holderIdentity));
        return HELD_BY_OTHER;
      }
      if (record.leaseTransitions !== active.term.leaseTransitions) {
        // Someone else took the Lease under our identity: yield to it.
        this.holders.sharedIdentityDetected();
        return HELD_BY_OTHER;
      }
    } else {
      // A Lease handed to us (transferLeadership) is ours to take at once; one held by
      // another (a namesake too), not expired nor proven gone, is waited for.
      const handedToUs = this.handoffs.accepts(record);
      const ownTransitions = this.ownTransitions;
      if (this.holders.mustWaitFor(current, { handedToUs, ownTransitions, renewedSinceLastRead })) {
        return HELD_BY_OTHER;
      }
    }

    // 4. Renew (keep acquireTime and leaseTransitions) or take over (a new term).
    const next = active
      ? renewalRecord(record, write)
      : takeoverRecord(
          record,
          this.identity,
          write,
          {
            coordinated: this.config.coordinated !== undefined,
            highestSeen: this.observed.highestTransitions,
            next: this.nextTransitions,
          },
          this.advertisement?.entry.podTemplateHash,
        );
    const reason = active ? undefined : acquisitionReason(record, this.identity);
    const finished = this.withScheduleLedger(next);
    return this.write('update', finished, current.version, signal, active, reason);
  }

  /**
   * The Lease does not exist. The leader steps down at once (someone deleted it under us).
   * A candidate that saw a live holder waits until that record would have expired by its
   * observation, as if it could not read the Lease: the holder may not have noticed yet.
   * Then (or at once, if it never saw one, as client-go does) it creates the Lease,
   * continuing from the highest leaseTransitions it has seen and carrying the schedule ledger
   * it last saw.
   */
  private recreate(
    active: LeaderTermLifetime | undefined,
    write: TermWrite,
    signal: AbortSignal,
  ): Promise<Attempt> | Attempt {
    if (active) return this.leaseDeleted();
    // Coordinated: only the election controller creates the Lease.
    if (this.config.coordinated) return HELD_BY_OTHER;
    const { waitMs, firstWait } = this.observed.leaseMissing();
    if (waitMs > 0) {
      if (firstWait) {
        const holder = this.observed.record!.holderIdentity;
        this.logger.info(electionMessages.leaseMissing(this.lock.description, holder, waitMs));
      }
      return HELD_BY_OTHER;
    }
    const highest = this.observed.highestTransitions;
    const token = highest === undefined ? 0 : this.nextTransitions(highest);
    const created = createdRecord(this.identity, write, token, this.advertisement?.entry);
    // The schedule ledger outlives the Lease object: a follower's writer has never been given
    // the stored text (it runs only before this elector's own writes), so the deleted Lease's
    // ledger as last seen goes into the new one and the writer merges its own into it.
    const lastLedger = this.observed.record?.scheduleLedger;
    if (lastLedger !== undefined) created.scheduleLedger = lastLedger;
    return this.write(
      'create',
      this.withScheduleLedger(created),
      undefined,
      signal,
      undefined,
      'created',
    );
  }

  private async write(
    operation: 'create' | 'update',
    record: LeaseRecord,
    version: string | undefined,
    signal: AbortSignal,
    active: LeaderTermLifetime | undefined,
    reason?: LeadershipChangeReason,
  ): Promise<Attempt> {
    // Before sending: the write may succeed even if we never see the answer.
    const previousOwn = this.ownTransitions;
    this.ownTransitions = record.leaseTransitions;
    const writeStartedMs = this.clock.nowMs();
    try {
      const written =
        operation === 'create'
          ? await this.requests.create(record, signal)
          : await this.requests.update(record, version!, signal);
      this.observe({ record, version: written });
      return { outcome: 'leading', writeStartedMs, reason };
    } catch (error) {
      // A conflict means this write did not happen: a record at these transitions is not ours
      // (it may be a namesake's that won the race).
      if (error instanceof LockConflictError) this.ownTransitions = previousOwn;
      if (active && !signal.aborted && isNotFound(error)) return this.leaseDeleted();
      this.failures.failed(operation, error, signal);
      return FAILED;
    }
  }

  /** The leader found its Lease deleted: it steps down at once. */
  private leaseDeleted(): Attempt {
    this.logger.warn(electionMessages.leaseDeleted(this.lock.description));
    return LEASE_DELETED;
  }
}
