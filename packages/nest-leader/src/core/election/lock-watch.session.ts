/**
 * A follower's watch of the lock while it campaigns: passes every change to the elector the
 * moment it arrives, wakes the acquire loop when the record is released or deleted (or when the
 * watch's health changes), and says whether the watch can be trusted to report changes — only
 * then may the elector skip its periodic reads. Framework-free.
 */
import { electionMessages } from '../election.messages.js';
import type { VersionedLeaseRecord } from '../../locks/resource-lock.js';
import type { LockWatch, WatchableLock } from '../../locks/watchable-lock.js';
import type { Clock } from '../clock.js';
import type { ElectionLogger } from '../leader-elector.options.js';
import type { ObservedRecord } from './observed-record.js';

/** What {@link LockWatchSession.readStarting} remembers for {@link LockWatchSession.readDone}. */
export interface FollowerRead {
  /** No change was delivered for a whole leaseDuration: this read also tests the watch. */
  testsWatch: boolean;
  /** When the record was last seen to change, before the read. */
  observedAtMs: number | undefined;
}

/** What the session tells the elector. */
export interface LockWatchSessionHandlers {
  /** A change arrived (the stored record, or `undefined`: deleted). */
  onRecord(current: VersionedLeaseRecord | undefined): void;
  /** True when `current` calls for a read at once (e.g. a Lease handed to this candidate). */
  wakes?(current: VersionedLeaseRecord): boolean;
}

/**
 * A follower's watch of the lock, as one elector uses it across its campaigns: see the file's
 * description. Without a watchable lock it never connects, so the elector always polls.
 */
export class LockWatchSession {
  private connected = false;
  /** The watch delivered a deletion since the last {@link LockWatchSession.readStarting}. */
  private deletionSeen = false;
  /** A read showed a change this connected watch had not delivered. */
  private suspect = false;
  /** The lock refused watching (e.g. RBAC): poll for the rest of this elector's life. */
  private unavailable = false;
  private watch: LockWatch | undefined;
  private wake: (() => void) | undefined;
  /** Aborted when the current campaign ends (the elector leads or stops): ends the watch. */
  private campaign: AbortController | undefined;

  /**
   * @param lock - the lock to watch; `undefined` (not watchable, or `watchLease: false`): never
   * @param clock - for the follower's sleeps
   * @param logger - where watch trouble is logged
   * @param handlers - told of every change the watch delivers
   */
  constructor(
    private readonly lock: WatchableLock | undefined,
    private readonly clock: Clock,
    private readonly logger: ElectionLogger,
    private readonly handlers: LockWatchSessionHandlers,
  ) {}

  /** Watches until `signal` aborts (no-op without a watchable lock or after a refusal). */
  private start(signal: AbortSignal): void {
    if (!this.lock || this.unavailable || signal.aborted) return;
    const lock = this.lock;
    this.connected = false;
    this.suspect = false;
    signal.addEventListener(
      'abort',
      () => {
        this.connected = false;
        this.watch = undefined;
      },
      { once: true },
    );
    this.watch = lock.watch(
      {
        onRecord: (current) => {
          if (signal.aborted) return;
          this.suspect = false;
          if (!current) this.deletionSeen = true;
          this.handlers.onRecord(current);
          const free = !current || current.record.holderIdentity === '';
          if (free || current.holderLiveness?.state === 'gone' || this.handlers.wakes?.(current)) {
            this.wake?.();
          }
        },
        onConnected: () => {
          if (signal.aborted) return;
          this.connected = true;
          this.wake?.();
        },
        onDisconnected: (error) => {
          if (signal.aborted) return;
          this.connected = false;
          if (error === undefined) return; // the server or client-node ended it; reconnecting
          this.logger.debug(electionMessages.watchInterrupted(lock.description, error));
          this.wake?.();
        },
        onUnavailable: (error) => {
          if (signal.aborted) return;
          this.connected = false;
          this.unavailable = true;
          this.logger.warn(electionMessages.watchUnavailable(lock.description, error));
          this.wake?.();
        },
      },
      signal,
    );
  }

  /**
   * True while the watch is connected and has not been caught missing a change: the elector may
   * then rely on it instead of reading on a schedule.
   */
  get healthy(): boolean {
    return this.connected && !this.suspect;
  }

  /**
   * With a healthy watch, a follower need not read a Lease that is held by someone else
   * (`identity` is this candidate's) and has not expired by its observation: every renewal
   * arrives as an event. A deletion delivered since the last read always calls for a read.
   */
  canSkipRead(observed: ObservedRecord, identity: string): boolean {
    const holder = observed.record?.holderIdentity;
    return (
      this.healthy &&
      !this.deletionSeen &&
      holder !== undefined &&
      holder !== '' &&
      holder !== identity &&
      observed.holderLiveness?.state !== 'gone' &&
      !observed.expired()
    );
  }

  /** A read of the lock starts: deletions delivered so far are accounted for by it. */
  readStarting(observed: ObservedRecord): FollowerRead {
    this.deletionSeen = false;
    return { testsWatch: this.healthy && observed.expired(), observedAtMs: observed.observedAtMs };
  }

  /**
   * A read of the lock ended without leading. The watch starts once the Lease could be read
   * and is held by someone else (`heldByOther`): from its version, and not with credentials
   * that cannot even read it (their error is reported once, by the read); it runs until
   * {@link LockWatchSession.stopWatching} or `signal` aborts. A read that tested the watch and
   * found a change it had not delivered makes it suspect ({@link LockWatchSession.missedChange}).
   */
  readDone(
    read: FollowerRead,
    observed: ObservedRecord,
    heldByOther: boolean,
    signal: AbortSignal,
  ): void {
    if (!this.campaign && heldByOther) {
      this.campaign = new AbortController();
      this.start(AbortSignal.any([signal, this.campaign.signal]));
    }
    if (read.testsWatch && observed.observedAtMs !== read.observedAtMs) this.missedChange();
  }

  /** The campaign ended (this candidate leads, or the elector stops): stop watching. */
  stopWatching(): void {
    this.campaign?.abort();
    this.campaign = undefined;
  }

  /**
   * How long, ms, a follower waits before it looks again (an event may wake it sooner): its
   * jittered retry period `retryDelayMs`, or less to wake when the holder's lease expires by
   * its observation (failover after a crash then costs leaseDuration, not leaseDuration +
   * retry); with a healthy watch and nothing to read, until that expiry.
   */
  nextReadDelayMs(observed: ObservedRecord, identity: string, retryDelayMs: number): number {
    const untilExpiryMs = observed.msUntilExpiry();
    if (this.healthy && this.canSkipRead(observed, identity)) return untilExpiryMs + 1;
    return untilExpiryMs > 0 ? Math.min(retryDelayMs, untilExpiryMs + 1) : retryDelayMs;
  }

  /**
   * A read showed a change the watch had not delivered though nothing arrived for a whole
   * leaseDuration: stop trusting it until its next event, and reconnect it.
   */
  missedChange(): void {
    if (!this.connected) return;
    this.suspect = true;
    this.logger.debug(electionMessages.watchSilent(this.lock!.description));
    this.watch?.reconnect();
  }

  /** Sleeps `delayMs`, or less when the watch wakes the follower; honours `signal`. */
  async sleep(delayMs: number, signal: AbortSignal): Promise<void> {
    // A listener removed afterwards rather than `AbortSignal.any`, whose links from the
    // long-lived run signal are only dropped by GC (one per sleep adds up over days).
    const woken = new AbortController();
    const wake = (): void => woken.abort();
    this.wake = wake;
    signal.addEventListener('abort', wake, { once: true });
    try {
      if (!signal.aborted) await this.clock.sleep(delayMs, woken.signal);
    } finally {
      this.wake = undefined;
      signal.removeEventListener('abort', wake);
    }
  }
}
