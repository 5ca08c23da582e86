/**
 * The elector's requests to its lock: each bounded by the per-request timeout and the
 * caller's signal, timed, and its outcome classified for the observer. Framework-free.
 */

import type {
  LeaseRecord,
  LockOperation,
  ResourceLock,
  VersionedLeaseRecord,
} from '../../locks/resource-lock.js';
import { abortable, type Clock, timeoutSignal } from '../clock.js';
import type { LockRequestOutcome } from '../election-observer.js';
import { lockRequestOutcome } from './lock-failure.reporter.js';

/**
 * Who hears about the requests of a {@link LockRequests}.
 * @internal
 */
export interface LockRequestListener {
  /** A request answered (`get` of a missing record included): its verb works. */
  succeeded(operation: LockOperation): void;
  /** A request finished either way: its outcome and latency (ms, monotonic). */
  finished(operation: LockOperation, outcome: LockRequestOutcome, durationMs: number): void;
}

/**
 * A {@link ResourceLock} as the elector calls it, as client-go bounds each call by a context
 * with a timeout: every request is aborted after `timeoutMs` (the elector's
 * `lockRequestTimeoutMs`) or when the caller's signal aborts, even if the lock ignores its signal,
 * and is reported to the listener (verb, outcome, latency). Failures are rethrown unchanged.
 * @internal
 */
export class LockRequests {
  /**
   * @param lock - the lock to call
   * @param clock - monotonic time for the timeout and the latency
   * @param timeoutMs - per-request timeout, ms
   * @param listener - told of every request
   */
  constructor(
    private readonly lock: ResourceLock,
    private readonly clock: Clock,
    private readonly timeoutMs: number,
    private readonly listener: LockRequestListener,
  ) {}

  /** The record and its version, or `undefined` when it does not exist. */
  get(signal: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    return this.call('get', (s) => this.lock.get(s), signal);
  }

  /** Creates the record; resolves to its version. */
  create(record: LeaseRecord, signal: AbortSignal): Promise<string> {
    return this.call('create', (s) => this.lock.create(record, s), signal);
  }

  /** Writes `record` over `version` (optimistic concurrency); resolves to the new version. */
  update(record: LeaseRecord, version: string, signal: AbortSignal): Promise<string> {
    return this.call('update', (s) => this.lock.update(record, version, s), signal);
  }

  private async call<T>(
    operation: LockOperation,
    request: (signal: AbortSignal) => Promise<T>,
    parent: AbortSignal,
  ): Promise<T> {
    const { signal, dispose } = timeoutSignal(this.clock, this.timeoutMs, parent);
    const startedMs = this.clock.nowMs();
    let outcome: LockRequestOutcome = 'success';
    try {
      const result = await abortable(request(signal), signal);
      if (result === undefined && operation === 'get') outcome = 'not-found';
      this.listener.succeeded(operation);
      return result;
    } catch (error) {
      outcome = lockRequestOutcome(error, signal, parent);
      throw error;
    } finally {
      dispose();
      this.listener.finished(operation, outcome, this.clock.nowMs() - startedMs);
    }
  }
}
