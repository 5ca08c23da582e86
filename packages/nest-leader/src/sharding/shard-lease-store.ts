/**
 * Where a sharded election keeps its Leases: the election's own Lease (who coordinates), the
 * assignment Lease, and one Lease per member — all in one namespace, found by name.
 * Framework-free.
 */

import type { ResourceLock, VersionedLeaseRecord } from '../locks/resource-lock.js';

/** One Lease of a listing: its name and its record as read. */
export interface ListedLease {
  readonly name: string;
  readonly current: VersionedLeaseRecord;
}

/**
 * The Leases of one namespace, by name: `KubernetesShardLeaseStore` (Leases of the API server),
 * `MemoryShardLeaseStore` (tests, from `nest-leader/testing`).
 */
export interface ShardLeaseStore {
  /** Where the Leases live, for messages, e.g. `Leases in namespace default`. */
  readonly description: string;
  /** The lock of the Lease `name` (the same object on every call with that name). */
  lease(name: string): ResourceLock;
  /**
   * Every Lease whose name starts with `prefix`, read now (one request: a LIST).
   * @throws whatever the store's requests throw (the caller retries)
   */
  list(prefix: string, signal: AbortSignal): Promise<ListedLease[]>;
  /**
   * Optional: reports every change of a Lease whose name starts with `prefix` as it happens
   * (`current` undefined: deleted), until `signal` aborts; returns at once, never throws (a
   * watch that fails reconnects by itself). Without it the coordinator lists every retryPeriod;
   * with it, every leaseDuration (a resync) and whenever a member's state changes.
   */
  watch?(
    prefix: string,
    listener: (name: string, current: VersionedLeaseRecord | undefined) => void,
    signal: AbortSignal,
  ): void;
}
