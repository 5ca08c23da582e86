/**
 * A follower's watch of the lock while it campaigns: passes every change to the elector the
 * moment it arrives, wakes the acquire loop when the record is released or deleted (or when the
 * watch's health changes), and says whether the watch can be trusted to report changes — only
 * then may the elector skip its periodic reads. Framework-free.
 */
import { electionMessages } from '../messages.js';
import type { VersionedLeaseRecord } from '../locks/resource-lock.js';
import type { LockWatch, WatchableLock } from '../locks/watchable-lock.js';
import type { Clock } from './clock.js';
import type { ElectionLogger } from './leader-elector.options.js';

/** What the session tells the elector. */
export interface LockWatchSessionHandlers {
  /** A change arrived (the stored record, or `undefined`: deleted). */
  onRecord(current: VersionedLeaseRecord | undefined): void;
}

export class LockWatchSession {
  private connected = false;
  /** A read showed a change this connected watch had not delivered. */
  private suspect = false;
  /** The lock refused watching (e.g. RBAC): poll for the rest of this elector's life. */
  private unavailable = false;
  private watch: LockWatch | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly lock: WatchableLock | undefined,
    private readonly clock: Clock,
    private readonly logger: ElectionLogger,
    private readonly handlers: LockWatchSessionHandlers,
  ) {}

  /** Watches until `signal` aborts (no-op without a watchable lock or after a refusal). */
  start(signal: AbortSignal): void {
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
          this.handlers.onRecord(current);
          const free = !current || current.record.holderIdentity === '';
          if (free || current.holderLiveness?.state === 'gone') this.wake?.();
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
