/**
 * A member's own Lease in a sharded election: its heartbeat, and the fence of everything it
 * owns. One writer (the member), renewed every retryPeriod; the member's epoch is the Lease's
 * `leaseTransitions` and its term ends, with every shard of that epoch, when no renewal
 * succeeded within renewDeadline (by its local clock, as the elector's) or when the Lease no
 * longer names it (the coordinator evicted it). Framework-free.
 */

import { LockConflictError } from '../errors.js';
import type { LeaseRecord, ResourceLock, VersionedLeaseRecord } from '../locks/resource-lock.js';
import { type Clock, sleepWith, timeoutSignal } from '../core/clock.js';
import type { ElectionLogger } from '../core/leader-elector.options.js';
import { LeaderTermLifetime, type LeaderTerm } from '../core/leader-term.js';
import { isNotFound } from '../core/election/lock-failure.reporter.js';
import { LockRequests } from '../core/election/lock-requests.js';
import type { LeaderTermEndReason } from '../errors.interfaces.js';
import { formatMemberState, type MemberState } from './member-state.js';
import { shardingMessages } from './sharding.messages.js';

/** Options of a {@link MemberLease}; times in ms. @internal */
export interface MemberLeaseOptions {
  /** The member's Lease (`<election>-m-<hash>`). */
  lock: ResourceLock;
  identity: string;
  clock: Clock;
  logger: ElectionLogger;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** How long one request to the Lease may take: `lockRequestTimeoutMs` of the renew deadline. */
  requestTimeoutMs: number;
  /** A new epoch began (the member holds its Lease). */
  onEpochStarted(term: LeaderTerm): void;
  /** The epoch ended (called once, synchronously, before the Lease may be written again). */
  onEpochEnded(term: LeaderTerm, reason: LeaderTermEndReason): void;
}

const NO_REQUEST_LISTENER = { succeeded: () => undefined, finished: () => undefined };

/**
 * The member side of the heartbeat. Acquire: read the Lease; take it (epoch + 1) when it is
 * missing, free (`holderIdentity` empty), the one this process's ended epoch left, or expired by
 * observation (unchanged for its leaseDuration, so a restarted process never resumes an epoch
 * another process may still be living). Renew: a compare-and-swap over the version last written,
 * every retryPeriod, and at once when there is an acknowledgement to write. Release on stop.
 * @internal
 */
export class MemberLease {
  private readonly options: MemberLeaseOptions;
  private readonly requests: LockRequests;
  private epoch: LeaderTermLifetime | undefined;
  /** Our last write (or read while holding): the version the next renewal writes over. */
  private cached: VersionedLeaseRecord | undefined;
  /** Epoch of the last term this process held, ended or not. */
  private lastEpoch: number | undefined;
  private highestEpochSeen: number | undefined;
  /** The record as last read, and when (monotonic ms) it was first seen in that form. */
  private observed: { fingerprint: string; atMs: number } | undefined;
  private ackRevision = 0;
  private wake = new AbortController();
  private readonly run = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(options: MemberLeaseOptions) {
    this.options = options;
    this.requests = new LockRequests(
      options.lock,
      options.clock,
      options.requestTimeoutMs,
      NO_REQUEST_LISTENER,
    );
  }

  /** The live epoch's term, if any (re-checks the renew deadline at call time). */
  get term(): LeaderTerm | undefined {
    const epoch = this.epoch;
    return epoch?.isLive() ? epoch.term : undefined;
  }

  /** Starts acquiring and renewing in the background. */
  start(): void {
    this.loop ??= this.campaign(this.run.signal).catch((error: unknown) => {
      this.options.logger.error(
        shardingMessages.memberLoopFailed(this.options.lock.description, error),
      );
      this.epoch?.lose('election-failed');
    });
  }

  /**
   * Records that every shard not granted at `revision` has stopped: written now (a renewal) when
   * `now`, so the coordinator can grant a revoked shard on, else with the next renewal.
   */
  acknowledge(revision: number, now: boolean): void {
    if (revision <= this.ackRevision) return;
    this.ackRevision = revision;
    if (now) this.wake.abort();
  }

  /**
   * Ends the epoch (the caller has stopped and drained its shards first) and clears the Lease's
   * holder, so the coordinator may grant this member's shards at once. A conflict (a renewal
   * aborted by the stop may still have been applied, leaving the cached version stale) is read
   * again: still this member's epoch, the release is written over the current version, once.
   * Never rejects; a release that fails leaves the shards to move when the Lease expires.
   */
  async stop(): Promise<void> {
    this.run.abort();
    await this.loop;
    const epoch = this.epoch;
    epoch?.lose('stopped');
    const cached = this.cached;
    if (!epoch || !cached || cached.record.holderIdentity !== this.options.identity) return;
    // Bounded by renewDeadline on the election's clock (the manual one in tests).
    const bound = timeoutSignal(this.options.clock, this.options.renewDeadlineMs);
    try {
      try {
        await this.requests.update(this.releaseOf(cached.record), cached.version, bound.signal);
      } catch (error) {
        if (!(error instanceof LockConflictError)) throw error;
        const current = await this.requests.get(bound.signal);
        const ours =
          current?.record.holderIdentity === this.options.identity &&
          current.record.leaseTransitions === cached.record.leaseTransitions;
        if (!ours) throw error;
        await this.requests.update(this.releaseOf(current.record), current.version, bound.signal);
      }
      this.options.logger.info(shardingMessages.memberReleased(this.options.lock.description));
    } catch (error) {
      this.options.logger.warn(
        shardingMessages.memberReleaseFailed(this.options.lock.description, error),
      );
    } finally {
      bound.dispose();
    }
  }

  /** `record` released: no holder, expired at once, its shards acknowledged and released. */
  private releaseOf(record: LeaseRecord): LeaseRecord {
    return {
      ...record,
      holderIdentity: '',
      leaseDurationSeconds: 1,
      renewTime: this.options.clock.wallNow(),
      shards: formatMemberState({ ack: this.ackRevision, released: true }),
    };
  }

  private async campaign(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const epoch = await this.acquire(signal);
      if (!epoch) return;
      await this.renew(epoch, signal);
    }
  }

  // --- Acquire -----------------------------------------------------------------------------

  private async acquire(signal: AbortSignal): Promise<LeaderTermLifetime | undefined> {
    const { clock, retryPeriodMs } = this.options;
    for (;;) {
      const epoch = await this.tryAcquire(signal);
      if (epoch || signal.aborted) return epoch;
      await clock.sleep(retryPeriodMs, signal);
      if (signal.aborted) return undefined;
    }
  }

  private async tryAcquire(signal: AbortSignal): Promise<LeaderTermLifetime | undefined> {
    const { clock, identity, lock, logger } = this.options;
    let current: VersionedLeaseRecord | undefined;
    try {
      current = await this.requests.get(signal);
    } catch (error) {
      if (!signal.aborted)
        logger.warn(shardingMessages.memberRequestFailed(lock.description, 'get', error));
      return undefined;
    }
    const writeStartedMs = clock.nowMs();
    const base = current?.record;
    if (base) {
      this.highestEpochSeen = Math.max(this.highestEpochSeen ?? 0, base.leaseTransitions);
      if (!this.isFree(base, writeStartedMs)) return undefined;
    }
    const epochNumber = base
      ? this.highestEpochSeen! + 1
      : this.highestEpochSeen === undefined
        ? 0
        : this.highestEpochSeen + 1;
    const now = clock.wallNow();
    const record: LeaseRecord = {
      ...(base ?? {}),
      holderIdentity: identity,
      leaseDurationSeconds: this.options.leaseDurationMs / 1000,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: epochNumber,
      shards: formatMemberState({ ack: 0 }),
    };
    delete record.handoff;
    try {
      const version = current
        ? await this.requests.update(record, current.version, signal)
        : await this.requests.create(record, signal);
      this.cached = { record, version };
    } catch (error) {
      if (!signal.aborted && !(error instanceof LockConflictError)) {
        logger.warn(
          shardingMessages.memberRequestFailed(
            lock.description,
            current ? 'update' : 'create',
            error,
          ),
        );
      }
      return undefined;
    }
    return this.beginEpoch(record, writeStartedMs);
  }

  /**
   * Whether a read record may be taken: free, left by this process's ended epoch, or unchanged
   * for its leaseDuration since this process first saw it (expired by observation).
   */
  private isFree(record: LeaseRecord, nowMs: number): boolean {
    if (record.holderIdentity === '') return true;
    if (
      record.holderIdentity === this.options.identity &&
      record.leaseTransitions === this.lastEpoch
    ) {
      return true;
    }
    const fingerprint = recordFingerprint(record);
    if (this.observed?.fingerprint !== fingerprint) {
      this.observed = { fingerprint, atMs: nowMs };
      this.options.logger.info(
        shardingMessages.memberLeaseHeld(this.options.lock.description, record.holderIdentity),
      );
      return false;
    }
    return nowMs - this.observed.atMs > record.leaseDurationSeconds * 1000;
  }

  private beginEpoch(record: LeaseRecord, writeStartedMs: number): LeaderTermLifetime {
    const { clock, renewDeadlineMs, logger, lock } = this.options;
    this.ackRevision = 0;
    this.lastEpoch = record.leaseTransitions;
    this.highestEpochSeen = Math.max(this.highestEpochSeen ?? 0, record.leaseTransitions);
    const epoch: LeaderTermLifetime = new LeaderTermLifetime({
      leaseTransitions: record.leaseTransitions,
      acquiredAt: record.acquireTime!,
      startedMs: writeStartedMs,
      renewDeadlineMs,
      clock,
      onRenewDeadlineExceeded: () =>
        logger.warn(shardingMessages.memberDeadlineExceeded(lock.description, renewDeadlineMs)),
      onEnded: (reason) => this.options.onEpochEnded(epoch.term, reason),
    });
    this.epoch = epoch;
    logger.info(shardingMessages.memberEpochStarted(lock.description, record.leaseTransitions));
    this.options.onEpochStarted(epoch.term);
    return epoch;
  }

  // --- Renew -------------------------------------------------------------------------------

  /**
   * Renews until the epoch ends or the run stops: attempts start every retryPeriod (and at once
   * for an acknowledgement); the epoch's own timer ends it at the renew deadline.
   */
  private async renew(epoch: LeaderTermLifetime, signal: AbortSignal): Promise<void> {
    const { clock, retryPeriodMs } = this.options;
    const live = AbortSignal.any([signal, epoch.holding]);
    let nextStartMs = epoch.lastRenewStartMs + retryPeriodMs;
    while (!live.aborted) {
      if (!this.wake.signal.aborted) {
        await sleepWith(
          clock,
          Math.max(0, nextStartMs - clock.nowMs()),
          AbortSignal.any([live, this.wake.signal]),
        );
      }
      if (this.wake.signal.aborted) this.wake = new AbortController();
      if (live.aborted) return;
      if (epoch.renewDeadlinePassed()) return epoch.stepDown();
      nextStartMs = clock.nowMs() + retryPeriodMs;
      const ack = this.ackRevision;
      if ((await this.renewOnce(epoch, ack, live)) === 'lost') return;
    }
  }

  private async renewOnce(
    epoch: LeaderTermLifetime,
    ack: number,
    signal: AbortSignal,
  ): Promise<'renewed' | 'failed' | 'lost'> {
    const { clock, lock, logger } = this.options;
    const cached = this.cached!;
    const record: LeaseRecord = {
      ...cached.record,
      leaseDurationSeconds: this.options.leaseDurationMs / 1000,
      renewTime: clock.wallNow(),
      shards: formatMemberState({ ack }),
    };
    const writeStartedMs = clock.nowMs();
    try {
      const version = await this.requests.update(record, cached.version, signal);
      this.cached = { record, version };
      epoch.renewed(writeStartedMs);
      return 'renewed';
    } catch (error) {
      if (signal.aborted) return 'failed';
      if (isNotFound(error)) return this.lost(epoch, 'lease-deleted');
      if (!(error instanceof LockConflictError)) {
        logger.warn(shardingMessages.memberRequestFailed(lock.description, 'update', error));
        return 'failed';
      }
    }
    // Someone else wrote our Lease: the coordinator's eviction, or a namesake. Read and judge.
    let current: VersionedLeaseRecord | undefined;
    try {
      current = await this.requests.get(signal);
    } catch {
      return 'failed';
    }
    if (!current) return this.lost(epoch, 'lease-deleted');
    const stillOurs =
      current.record.holderIdentity === this.options.identity &&
      current.record.leaseTransitions === epoch.term.leaseTransitions;
    if (!stillOurs) return this.lost(epoch, 'lease-taken-over');
    this.cached = current;
    return 'failed';
  }

  private lost(epoch: LeaderTermLifetime, reason: LeaderTermEndReason): 'lost' {
    this.options.logger.warn(
      shardingMessages.memberEpochLost(
        this.options.lock.description,
        epoch.term.leaseTransitions,
        reason,
      ),
    );
    epoch.lose(reason);
    return 'lost';
  }
}

/** The election record of `record` (not its annotations): what changes with a renewal. */
export function recordFingerprint(record: LeaseRecord): string {
  return JSON.stringify([
    record.holderIdentity,
    record.leaseTransitions,
    record.leaseDurationSeconds,
    record.acquireTime?.getTime(),
    record.renewTime?.getTime(),
  ]);
}

export type { MemberState };
