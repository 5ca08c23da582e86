import type {
  LeaseRecord,
  LockWatch,
  LockWatchListener,
  VersionedLeaseRecord,
  WatchableLock,
} from 'nest-leader/core';
import { MemoryLock } from 'nest-leader/testing';

/**
 * One stored record (a `MemoryLock`) that several candidates watch, each through its own
 * {@link WatchableLockView} (own request counters), with switches for what a real watch does
 * wrong: go silent, disconnect, refuse.
 */
export class WatchHub {
  readonly store = new MemoryLock({ name: 'watched' });
  /** When true, changes are not delivered (a watch that looks connected but says nothing). */
  silent = false;
  private readonly watchers = new Set<{ listener: LockWatchListener; view: WatchableLockView }>();

  view(): WatchableLockView {
    return new WatchableLockView(this);
  }

  /** Registers a watcher; it connects on the next microtask, as a real watch would. */
  add(listener: LockWatchListener, view: WatchableLockView, signal: AbortSignal): void {
    const entry = { listener, view };
    this.watchers.add(entry);
    signal.addEventListener('abort', () => this.watchers.delete(entry), { once: true });
    queueMicrotask(() => {
      if (!signal.aborted) listener.onConnected();
    });
  }

  /** Delivers the current record to every watcher (unless silent). */
  deliver(): void {
    if (this.silent) return;
    const current = this.store.read();
    for (const { listener } of this.watchers) listener.onRecord(current && copy(current));
  }

  /** A foreign write (no version check), delivered to the watchers. */
  set(record: LeaseRecord): void {
    this.store.set(record);
    this.deliver();
  }

  /** Every watch fails (they stay registered; `reconnectAll` connects them again). */
  disconnectAll(error: Error = new Error('connection reset')): void {
    for (const { listener } of this.watchers) listener.onDisconnected(error);
  }

  reconnectAll(): void {
    for (const { listener } of this.watchers) listener.onConnected();
  }

  /** Every watch is refused for good (e.g. RBAC forbids `watch`). */
  refuseAll(error: Error): void {
    for (const entry of this.watchers) {
      entry.listener.onUnavailable(error);
      this.watchers.delete(entry);
    }
  }

  get watcherCount(): number {
    return this.watchers.size;
  }
}

function copy(current: VersionedLeaseRecord): VersionedLeaseRecord {
  return { record: { ...current.record }, version: current.version };
}

/** One candidate's connection to a {@link WatchHub}: counts its own requests. */
export class WatchableLockView implements WatchableLock {
  readonly description = 'MemoryLock watched';
  readonly calls = { get: 0, create: 0, update: 0, watch: 0, reconnect: 0 };

  constructor(private readonly hub: WatchHub) {}

  get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    this.calls.get++;
    return this.hub.store.get(signal);
  }

  async create(record: LeaseRecord, signal?: AbortSignal): Promise<string> {
    this.calls.create++;
    const version = await this.hub.store.create(record, signal);
    this.hub.deliver();
    return version;
  }

  async update(record: LeaseRecord, version: string, signal?: AbortSignal): Promise<string> {
    this.calls.update++;
    const written = await this.hub.store.update(record, version, signal);
    this.hub.deliver();
    return written;
  }

  watch(listener: LockWatchListener, signal: AbortSignal): LockWatch {
    this.calls.watch++;
    this.hub.add(listener, this, signal);
    return { reconnect: () => this.calls.reconnect++ };
  }
}
