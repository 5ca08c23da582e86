/**
 * What a candidate knows of the election record: the last record it saw and the local
 * monotonic time that record last changed, as client-go's `observedRecord` and `observedTime`.
 * Expiry is judged by that sighting on our own clock, never by the remote `renewTime`, which is
 * what makes an election tolerant of clock skew between pods. Framework-free.
 */

import {
  copyLeaseRecord,
  type LeaseRecord,
  type VersionedLeaseRecord,
} from '../../locks/resource-lock.js';
import type { Clock } from '../clock.js';
import { MAX_LEASE_TRANSITIONS } from '../leader-elector.options.js';

/**
 * True when `a` and `b` hold the same election record (holder, duration, transitions,
 * acquire and renew time): what client-go compares to see a change. Metadata (labels,
 * annotations, the version) is not part of it: someone else's label write is not a renewal.
 * @internal
 */
export function sameElectionRecord(a: LeaseRecord, b: LeaseRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    Object.is(a.leaseDurationSeconds, b.leaseDurationSeconds) &&
    Object.is(a.leaseTransitions, b.leaseTransitions) &&
    a.acquireTime?.getTime() === b.acquireTime?.getTime() &&
    a.renewTime?.getTime() === b.renewTime?.getTime()
  );
}

/**
 * `leaseTransitions` as a valid int32 count: negative or malformed (NaN, ±Infinity) → 0,
 * fractions rounded down, beyond the int32 maximum → the maximum.
 * @internal
 */
export function validTransitions(value: number): number {
  if (!Number.isFinite(value) || value < 0) return 0;
  return Math.min(Math.floor(value), MAX_LEASE_TRANSITIONS);
}

/**
 * See {@link ObservedRecord.leaseMissing}.
 * @internal
 */
export interface MissingLeaseWait {
  /** How long, ms, to wait before creating the Lease (≤ 0: create it now). */
  waitMs: number;
  /** True the first time a wait is due since the Lease was last seen: report it once. */
  firstWait: boolean;
}

/**
 * One candidate's sighting of the election record, as client-go's `observedRecord` /
 * `observedTime`: the record, its version, and when it was last seen to CHANGE on the local
 * monotonic clock; plus the highest `leaseTransitions` ever seen (a recreated Lease continues
 * it, so fencing tokens never repeat) and how long the Lease has been missing.
 * @internal
 */
export class ObservedRecord {
  private observed: (VersionedLeaseRecord & { observedAtMs: number }) | undefined;
  private highest: number | undefined;
  private missingSinceMs: number | undefined;
  private missingReported = false;

  /**
   * @param clock - the monotonic clock sightings are timed on
   * @param leaseDurationMs - this candidate's leaseDuration, ms: used for a record whose own
   *   `leaseDurationSeconds` is missing or invalid, and as the wait for a missing Lease
   */
  constructor(
    private readonly clock: Clock,
    private readonly leaseDurationMs: number,
  ) {}

  /** The record as last seen (a copy), or `undefined` before the first sighting. */
  get record(): LeaseRecord | undefined {
    return this.observed?.record;
  }

  /** The version (`resourceVersion`) of the record as last seen. */
  get version(): string | undefined {
    return this.observed?.version;
  }

  /** What the lock could tell of the holder's process at the last sighting (`FileLock` only). */
  get holderLiveness(): VersionedLeaseRecord['holderLiveness'] {
    return this.observed?.holderLiveness;
  }

  /** Monotonic time, ms, the record was last seen to change (client-go's `observedTime`). */
  get observedAtMs(): number | undefined {
    return this.observed?.observedAtMs;
  }

  /** Highest valid `leaseTransitions` in any record seen (read or written), if any. */
  get highestTransitions(): number | undefined {
    return this.highest;
  }

  /**
   * Remembers `current` (copied). The observed time moves only when the election record
   * changed (see {@link sameElectionRecord}): a metadata write bumps the version, not the lease.
   * @returns true when the holder differs from the one seen before (always on the first sighting).
   */
  observe(current: VersionedLeaseRecord): boolean {
    const previous = this.observed;
    const changed = !previous || !sameElectionRecord(previous.record, current.record);
    this.observed = {
      record: copyLeaseRecord(current.record),
      version: current.version,
      observedAtMs: changed ? this.clock.nowMs() : previous.observedAtMs,
      holderLiveness: current.holderLiveness,
    };
    const transitions = validTransitions(current.record.leaseTransitions);
    this.highest = Math.max(this.highest ?? 0, transitions);
    return previous?.record.holderIdentity !== current.record.holderIdentity;
  }

  /** True when a record was seen before and `record` differs from it as an election record. */
  differsFrom(record: LeaseRecord): boolean {
    return this.observed !== undefined && !sameElectionRecord(this.observed.record, record);
  }

  /**
   * Ms until the observed record expires by our clock (≤ 0: expired): its
   * `leaseDurationSeconds` after it was last seen to change. +Infinity when there is nothing to
   * wait for (no record seen yet, or it is free).
   */
  msUntilExpiry(): number {
    if (!this.observed || this.observed.record.holderIdentity === '') return Infinity;
    const { record, observedAtMs } = this.observed;
    const seconds =
      Number.isFinite(record.leaseDurationSeconds) && record.leaseDurationSeconds > 0
        ? record.leaseDurationSeconds
        : this.leaseDurationMs / 1000;
    return observedAtMs + seconds * 1000 - this.clock.nowMs();
  }

  /** Expired when its leaseDuration has passed on OUR clock since we saw the record change. */
  expired(): boolean {
    return this.msUntilExpiry() <= 0;
  }

  /**
   * The Lease was found missing: how long to wait before creating it. One that never saw a
   * record cannot know there was a leader: no wait, as client-go. One that saw a record waits
   * until that record would have expired by its observation AND a full leaseDuration since it
   * first found the Lease missing: its last sighting may be stale (it was cut off from the API
   * server while someone else took over), and a leader still renewing notices the deletion, and
   * stops, within that time.
   */
  leaseMissing(): MissingLeaseWait {
    if (!this.observed) return { waitMs: 0, firstWait: false };
    const nowMs = this.clock.nowMs();
    this.missingSinceMs ??= nowMs;
    const expiryMs = this.msUntilExpiry();
    const sinceMissingMs = this.missingSinceMs + this.leaseDurationMs - nowMs;
    const waitMs = Math.max(Number.isFinite(expiryMs) ? expiryMs : 0, sinceMissingMs);
    const firstWait = waitMs > 0 && !this.missingReported;
    if (firstWait) this.missingReported = true;
    return { waitMs, firstWait };
  }

  /** The Lease exists (again): a later disappearance starts a new wait. */
  leasePresent(): void {
    this.missingReported = false;
    this.missingSinceMs = undefined;
  }
}
