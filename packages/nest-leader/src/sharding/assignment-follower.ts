/**
 * A member's view of the assignment: watched when the assignment Lease can be watched (read
 * again every 4 × leaseDuration, in case the watch missed something: safety never depends on
 * it — a revoke missed is evicted, a grant missed waits for this read), polled every retryPeriod
 * otherwise. Delivers each new revision once, in order. Framework-free.
 */

import type { Clock } from '../core/clock.js';
import type { ElectionLogger } from '../core/leader-elector.options.js';
import type { ResourceLock, VersionedLeaseRecord } from '../locks/resource-lock.js';
import { isWatchableLock } from '../locks/watchable-lock.js';
import { parseShardAssignment, type ShardAssignment } from './shard-assignment.js';
import { shardingMessages } from './sharding.messages.js';

/** A watching member reads the assignment again every this many leaseDurations. */
const RESYNC_LEASE_DURATIONS = 4;

/** What the follower reports: an assignment, or that none can be trusted (`undefined`). */
export type AssignmentListener = (assignment: ShardAssignment | undefined) => void;

/** Options of an {@link AssignmentFollower}; times in ms. @internal */
export interface AssignmentFollowerOptions {
  election: string;
  shards: number;
  lock: ResourceLock;
  clock: Clock;
  logger: ElectionLogger;
  retryPeriodMs: number;
  leaseDurationMs: number;
  onAssignment: AssignmentListener;
}

/** @internal */
export class AssignmentFollower {
  private readonly options: AssignmentFollowerOptions;
  private latest: number | undefined;
  private loop: Promise<void> | undefined;
  private readonly run = new AbortController();
  private wake = new AbortController();

  constructor(options: AssignmentFollowerOptions) {
    this.options = options;
  }

  /** The latest assignment revision delivered, if any. */
  get revision(): number | undefined {
    return this.latest;
  }

  start(): void {
    const { lock } = this.options;
    const signal = this.run.signal;
    if (isWatchableLock(lock)) {
      lock.watch(
        {
          onRecord: (current) => this.deliver(current),
          onConnected: () => undefined,
          onDisconnected: () => undefined,
          onUnavailable: () => undefined,
        },
        signal,
      );
    }
    this.loop ??= this.poll(signal, isWatchableLock(lock));
  }

  /** Reads the assignment now (e.g. when a new member epoch begins). */
  refresh(): void {
    this.wake.abort();
  }

  async stop(): Promise<void> {
    this.run.abort();
    await this.loop;
  }

  private async poll(signal: AbortSignal, watching: boolean): Promise<void> {
    const { clock, lock, logger, election, retryPeriodMs, leaseDurationMs } = this.options;
    while (!signal.aborted) {
      try {
        this.deliver(await lock.get(signal));
      } catch (error) {
        if (!signal.aborted) logger.warn(shardingMessages.assignmentReadFailed(election, error));
      }
      const wake = AbortSignal.any([signal, this.wake.signal]);
      await clock.sleep(watching ? RESYNC_LEASE_DURATIONS * leaseDurationMs : retryPeriodMs, wake);
      if (this.wake.signal.aborted) this.wake = new AbortController();
    }
  }

  private deliver(current: VersionedLeaseRecord | undefined): void {
    if (this.run.signal.aborted) return;
    if (!current) {
      // Deleted: nothing can be proven granted; a recreated assignment starts over.
      this.latest = undefined;
      this.options.onAssignment(undefined);
      return;
    }
    const assignment = parseShardAssignment(current.record.shards, this.options.shards);
    if (!assignment) {
      this.latest = undefined;
      this.options.onAssignment(undefined);
      return;
    }
    if (this.latest !== undefined && assignment.revision <= this.latest) return;
    this.latest = assignment.revision;
    this.options.onAssignment(assignment);
  }
}
