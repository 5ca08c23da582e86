import type { Clock } from '../election/clock.js';

/**
 * Tracks the running `@LeaderOnly()` invocations (and leadership-lost handlers) of one election
 * so its leadership is not given up under them: shutdown and step-down wait in
 * {@link InFlightTracker.drain}.
 */
export class InFlightTracker {
  private open = true;
  private readonly pending = new Set<Promise<void>>();

  /** False once {@link InFlightTracker.close} was called: start no new leader-only work. */
  get accepting(): boolean {
    return this.open;
  }

  /** Number of tracked invocations that have not settled yet. */
  get size(): number {
    return this.pending.size;
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
    if (isThenable(result)) {
      const settled: Promise<void> = Promise.resolve(result)
        .then(noop, noop)
        .finally(() => this.pending.delete(settled));
      this.pending.add(settled);
    }
    return result;
  }

  /**
   * Waits until nothing is in flight — including work tracked while waiting — or until
   * `timeoutMs` elapse on `clock`. Resolves `true` if everything settled, `false` on timeout.
   */
  async drain(timeoutMs: number, clock: Clock): Promise<boolean> {
    if (this.pending.size === 0) return true;
    const timer = new AbortController();
    const settled = async (): Promise<boolean> => {
      while (this.pending.size > 0) await Promise.all(this.pending);
      return true;
    };
    const timedOut = async (): Promise<boolean> => {
      await clock.sleep(timeoutMs, timer.signal);
      return false;
    };
    try {
      return await Promise.race([settled(), timedOut()]);
    } finally {
      timer.abort();
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

function noop(): void {}
