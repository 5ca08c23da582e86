import { LockConflictError } from '../errors.js';
import { lockMessages } from './lock.messages.js';
import {
  copyLeaseRecord,
  type LeaseRecord,
  type LockOperation,
  type ResourceLock,
  type VersionedLeaseRecord,
} from './resource-lock.js';

export type { LockOperation } from './resource-lock.js';

/** One successful write to a {@link MemoryLock}, in order. */
export interface MemoryLockWrite {
  operation: Exclude<LockOperation, 'get'> | 'set';
  record: LeaseRecord;
  version: string;
}

interface Fault {
  operation: LockOperation | 'any';
  remaining: number;
  /** An error to reject with, or `'hang'` to never settle until the call's signal aborts. */
  effect: Error | 'hang';
}

/** How many writes {@link MemoryLock.writes} keeps (the oldest are dropped). */
export const MAX_WRITE_LOG = 1000;

/**
 * A {@link ResourceLock} in memory, for tests: several electors sharing one `MemoryLock`
 * behave like candidates sharing one Lease. Operations settle asynchronously (on the
 * microtask queue) and honour their `AbortSignal`.
 *
 * Test hooks: {@link MemoryLock.failNext} and {@link MemoryLock.hangNext} inject faults,
 * {@link MemoryLock.read}/{@link MemoryLock.set}/{@link MemoryLock.delete} act as a foreign
 * writer, {@link MemoryLock.writes} and {@link MemoryLock.calls} record what happened.
 */
export class MemoryLock implements ResourceLock {
  /** `MemoryLock <name>`. */
  readonly description: string;
  /** Stores {@link LeaseRecord.candidates} as given (see {@link ResourceLock.storesCandidates}). */
  readonly storesCandidates = true;
  /** Number of calls per operation, including failed ones. */
  readonly calls: Record<LockOperation, number> = { get: 0, create: 0, update: 0 };
  private stored: { record: LeaseRecord; version: number } | undefined;
  private nextVersion = 1;
  private readonly faults: Fault[] = [];
  /** The last `MAX_WRITE_LOG` (1000) successful writes. */
  private readonly writeLog: MemoryLockWrite[] = [];

  /** @param opts.name - shown in {@link MemoryLock.description}; default `memory`. */
  constructor(opts: { name?: string } = {}) {
    this.description = `MemoryLock ${opts.name ?? 'memory'}`;
  }

  /** The last `MAX_WRITE_LOG` (1000) successful writes (create, update, {@link MemoryLock.set}), oldest first. */
  get writes(): readonly MemoryLockWrite[] {
    return this.writeLog.map((w) => ({ ...w, record: copyLeaseRecord(w.record) }));
  }

  /** Reads the record (a copy); `undefined` if none. As {@link ResourceLock.get}. */
  async get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    await this.enter('get', signal);
    return this.read();
  }

  /** Stores the record if none exists. @throws LockConflictError if one does. */
  async create(record: LeaseRecord, signal?: AbortSignal): Promise<string> {
    await this.enter('create', signal);
    if (this.stored) throw new LockConflictError(this.description, 'create');
    return this.write('create', record);
  }

  /** Replaces the record if still at `version`. @throws LockConflictError otherwise. */
  async update(record: LeaseRecord, version: string, signal?: AbortSignal): Promise<string> {
    await this.enter('update', signal);
    if (!this.stored || String(this.stored.version) !== version) {
      throw new LockConflictError(this.description, 'update');
    }
    return this.write('update', record);
  }

  /** The stored record and version right now (a copy), or `undefined`. Synchronous. */
  read(): VersionedLeaseRecord | undefined {
    if (!this.stored) return undefined;
    return { record: copyLeaseRecord(this.stored.record), version: String(this.stored.version) };
  }

  /** Overwrites the record as another writer would (no version check); resolves the new version. */
  set(record: LeaseRecord): string {
    return this.write('set', record);
  }

  /** Deletes the record, as `kubectl delete lease` would. */
  delete(): void {
    this.stored = undefined;
  }

  /**
   * Makes the next `times` calls of `operation` (`'any'`: of any operation) reject with
   * `error` (default: a plain `Error`, as a network failure: `injected update failure`).
   */
  failNext(operation: LockOperation | 'any', error?: Error, times = 1): void {
    this.faults.push({
      operation,
      remaining: times,
      effect: error ?? new Error(lockMessages.injectedFailure(operation)),
    });
  }

  /**
   * Makes the next `times` calls of `operation` never settle until their signal aborts
   * (then they reject with the signal's reason), like a request to an unresponsive server.
   */
  hangNext(operation: LockOperation | 'any', times = 1): void {
    this.faults.push({ operation, remaining: times, effect: 'hang' });
  }

  /** Removes every pending injected fault. */
  clearFaults(): void {
    this.faults.length = 0;
  }

  private async enter(operation: LockOperation, signal: AbortSignal | undefined): Promise<void> {
    this.calls[operation] += 1;
    await Promise.resolve();
    signal?.throwIfAborted();
    const fault = this.faults.find((f) => f.operation === operation || f.operation === 'any');
    if (!fault) return;
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.faults.splice(this.faults.indexOf(fault), 1);
    if (fault.effect !== 'hang') throw fault.effect;
    await new Promise<never>((_, reject) => {
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  }

  private write(operation: MemoryLockWrite['operation'], record: LeaseRecord): string {
    const version = this.nextVersion++;
    this.stored = { record: copyLeaseRecord(record), version };
    this.writeLog.push({ operation, record: copyLeaseRecord(record), version: String(version) });
    // Bounded, so `lock: 'memory'` can run for days: a test looks at recent writes.
    if (this.writeLog.length > MAX_WRITE_LOG) this.writeLog.shift();
    return String(version);
  }
}
