import type { Clock } from '../../core/clock.js';

/**
 * Tracks the running `@LeaderOnly()` invocations (and leadership-lost handlers) of one election
 * so its leadership is not given up under them: shutdown and step-down wait in
 * {@link InFlightTracker.drain}.
 */
export class InFlightTracker {
  private open = true;
  /** Tracked invocations not settled yet. */
  private pending = 0;
  /** Resolvers of {@link InFlightTracker.drain} calls waiting for `pending` to reach 0. */
  private idleWaiters: (() => void)[] = [];
  /** Settles one tracked invocation (bound once: no closure per call). */
  private readonly settleOne = (): void => {
    if (--this.pending > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  };

  /** False once {@link InFlightTracker.close} was called: start no new leader-only work. */
  get accepting(): boolean {
    return this.open;
  }

  /** Number of tracked invocations that have not settled yet. */
  get size(): number {
    return this.pending;
  }

  /** Refuses new work from now on (shutdown has begun). */
  close(): void {
    this.open = false;
  }

  /**
   * Calls `run` and, if it returns a promise (or any thenable), tracks it until it settles.
   * Returns exactly what `run` returns, and throws what it throws.
   */
  track<T>(run: () => T): T {
    const result = run();
    if (isThenable(result)) this.trackSettling(result);
    return result;
  }

  /** Tracks `work` until it settles (fulfilled or rejected). */
  trackSettling(work: PromiseLike<unknown>): void {
    this.pending++;
    // A native promise calls exactly one handler once; any other thenable is normalised first.
    // Our handlers also mark a rejection as handled, as before (the caller sees it anyway).
    const settling = work instanceof Promise ? work : Promise.resolve(work);
    settling.then(this.settleOne, this.settleOne);
  }

  /**
   * Waits until nothing is in flight — including work tracked while waiting — or until
   * `timeoutMs` elapse on `clock`. Resolves `true` if everything settled, `false` on timeout.
   */
  async drain(timeoutMs: number, clock: Clock): Promise<boolean> {
    if (this.pending === 0) return true;
    const timer = new AbortController();
    const settled = new Promise<boolean>((resolve) => {
      this.idleWaiters.push(() => resolve(true));
    });
    const timedOut = async (): Promise<boolean> => {
      await clock.sleep(timeoutMs, timer.signal);
      return false;
    };
    try {
      return await Promise.race([settled, timedOut()]);
    } finally {
      timer.abort();
    }
  }
}

/** True for promises and any object or function with a `then` method. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}
