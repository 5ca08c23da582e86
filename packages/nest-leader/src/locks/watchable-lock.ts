/**
 * An optional capability of a {@link ResourceLock}: pushing every change of the record as it
 * happens, so followers learn of renewals and releases at once instead of at their next poll
 * (client-go polls; Kubernetes maintainers estimated that watching halves leader-election
 * requests, kubernetes/kubernetes #121806). The elector never depends on it for safety: every
 * write it makes is still decided on a fresh read.
 */
import type { ResourceLock, VersionedLeaseRecord } from './resource-lock.js';

/** What a lock's watch reports, in order, until its signal aborts. */
export interface LockWatchListener {
  /**
   * The stored record as of a change (or as first seen): called the moment the change
   * arrives. `undefined`: the record was deleted.
   */
  onRecord(current: VersionedLeaseRecord | undefined): void;
  /** The watch is established: from now on every change is reported (until `onDisconnected`). */
  onConnected(): void;
  /**
   * The watch ended or failed; changes may go unreported until the next `onConnected`. The
   * lock reconnects by itself (resuming from the last version it saw).
   */
  onDisconnected(error?: unknown): void;
  /**
   * Watching is not possible (the credentials may not `watch`, or the server refuses it for
   * good); the lock stopped trying. `error` says why (e.g. a `LeaseApiError` of kind forbidden).
   */
  onUnavailable(error: unknown): void;
}

/** Control over a running watch. */
export interface LockWatch {
  /**
   * Ends the current connection and opens a new one (from the last version seen): for a
   * watch that looks connected but missed a change.
   */
  reconnect(): void;
}

/** A lock that can also push changes of its record. */
export interface WatchableLock extends ResourceLock {
  /**
   * Watches the record until `signal` aborts; reports to `listener`. Returns at once.
   * Never throws: failures go to `listener.onDisconnected` / `onUnavailable`.
   */
  watch(listener: LockWatchListener, signal: AbortSignal): LockWatch;
}

/** Whether `lock` offers {@link WatchableLock.watch}. */
export function isWatchableLock(lock: ResourceLock): lock is WatchableLock {
  return typeof (lock as Partial<WatchableLock>).watch === 'function';
}
