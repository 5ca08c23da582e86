/**
 * A {@link ShardLeaseStore} in memory, for tests: one `MemoryLock` per Lease name, each
 * watchable as a Lease is. Framework-free.
 */

import { MemoryLock } from '../locks/memory.lock.js';
import type { LeaseRecord, VersionedLeaseRecord } from '../locks/resource-lock.js';
import type { LockWatch, LockWatchListener, WatchableLock } from '../locks/watchable-lock.js';
import type { ListedLease, ShardLeaseStore } from './shard-lease-store.js';

/**
 * A `MemoryLock` that also reports every write and deletion to its watchers (synchronously
 * after the write, as a watch event would arrive).
 */
export class WatchableMemoryLock extends MemoryLock implements WatchableLock {
  private readonly watchers = new Set<LockWatchListener>();
  /** Told of every change (the store's prefix watches). @internal */
  onChange: ((current: VersionedLeaseRecord | undefined) => void) | undefined;
  /** Set false to make watches miss every change (a broken watch). */
  delivering = true;

  /** See {@link WatchableLock.watch}: reports the current record, then every change. */
  watch(listener: LockWatchListener, signal: AbortSignal): LockWatch {
    this.watchers.add(listener);
    signal.addEventListener('abort', () => this.watchers.delete(listener), { once: true });
    queueMicrotask(() => {
      if (signal.aborted) return;
      listener.onConnected();
      listener.onRecord(this.read());
    });
    return { reconnect: () => undefined };
  }

  override async create(record: LeaseRecord, signal?: AbortSignal): Promise<string> {
    const version = await super.create(record, signal);
    this.notify();
    return version;
  }

  override async update(
    record: LeaseRecord,
    version: string,
    signal?: AbortSignal,
  ): Promise<string> {
    const written = await super.update(record, version, signal);
    this.notify();
    return written;
  }

  override set(record: LeaseRecord): string {
    const version = super.set(record);
    this.notify();
    return version;
  }

  override delete(): void {
    super.delete();
    this.notify();
  }

  private notify(): void {
    if (!this.delivering) return;
    const current: VersionedLeaseRecord | undefined = this.read();
    for (const watcher of this.watchers) watcher.onRecord(current);
    this.onChange?.(current);
  }
}

/** Leases in memory by name; `list` counts its calls in {@link MemoryShardLeaseStore.lists}. */
export class MemoryShardLeaseStore implements ShardLeaseStore {
  readonly description = 'Leases in memory';
  /** Number of `list` calls so far. */
  lists = 0;
  private readonly locks = new Map<string, WatchableMemoryLock>();
  private readonly watchers = new Set<{
    prefix: string;
    listener: (name: string, current: VersionedLeaseRecord | undefined) => void;
  }>();

  /** The lock of `name`, created on first use. */
  lease(name: string): WatchableMemoryLock {
    let lock = this.locks.get(name);
    if (!lock) {
      const created = new WatchableMemoryLock({ name });
      created.onChange = (current) => {
        for (const { prefix, listener } of this.watchers) {
          if (name.startsWith(prefix)) listener(name, current);
        }
      };
      this.locks.set(name, (lock = created));
    }
    return lock;
  }

  /** See {@link ShardLeaseStore.watch}: changes are reported synchronously after each write. */
  watch(
    prefix: string,
    listener: (name: string, current: VersionedLeaseRecord | undefined) => void,
    signal: AbortSignal,
  ): void {
    const watcher = { prefix, listener };
    this.watchers.add(watcher);
    signal.addEventListener('abort', () => this.watchers.delete(watcher), { once: true });
  }

  /** Every existing Lease whose name starts with `prefix`, sorted by name. */
  async list(prefix: string, signal: AbortSignal): Promise<ListedLease[]> {
    this.lists += 1;
    await Promise.resolve();
    signal.throwIfAborted();
    const listed: ListedLease[] = [];
    for (const [name, lock] of [...this.locks].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const current = name.startsWith(prefix) ? lock.read() : undefined;
      if (current) listed.push({ name, current });
    }
    return listed;
  }
}
