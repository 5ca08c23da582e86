/**
 * Time as the elector sees it. Deadlines use the monotonic clock only; the wall clock is
 * only written into the Lease (acquireTime, renewTime), never compared.
 */

/** A scheduled callback; {@link TimerHandle.cancel} is idempotent. */
export interface TimerHandle {
  /** Stops the timer; a no-op once it fired or was cancelled. */
  cancel(): void;
}

/**
 * The elector's source of time. Inject a fake (`ManualClock` from `nest-leader/testing`)
 * to test elections deterministically.
 */
export interface Clock {
  /** Monotonic milliseconds from an arbitrary origin; never jumps with the wall clock. */
  nowMs(): number;
  /** Wall-clock time, only for writing `acquireTime`/`renewTime`. */
  wallNow(): Date;
  /** Calls `callback` once after `delayMs` milliseconds of monotonic time. */
  setTimer(delayMs: number, callback: () => void): TimerHandle;
  /**
   * Resolves after `delayMs` milliseconds, or as soon as `signal` aborts. Never rejects;
   * callers check `signal.aborted` afterwards.
   */
  sleep(delayMs: number, signal?: AbortSignal): Promise<void>;
}

/** Longest delay `setTimeout` supports; longer ones are chained. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** {@link Clock.sleep} built on any `setTimer`, shared by the clocks. */
export function sleepWith(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      timer.cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimer(delayMs, done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The real clock: `performance.now()` and `setTimeout`. */
export class SystemClock implements Clock {
  /** `performance.now()`: monotonic ms since process start. */
  nowMs(): number {
    return performance.now();
  }

  /** `new Date()`. */
  wallNow(): Date {
    return new Date();
  }

  /** `setTimeout`, chained for delays beyond its 2^31 − 1 ms limit. */
  setTimer(delayMs: number, callback: () => void): TimerHandle {
    let handle: ReturnType<typeof setTimeout>;
    const dueMs = this.nowMs() + Math.max(0, delayMs);
    const arm = (): void => {
      const remaining = dueMs - this.nowMs();
      if (remaining <= 0) return callback();
      handle = setTimeout(arm, Math.min(remaining, MAX_TIMEOUT_MS));
    };
    handle = setTimeout(arm, Math.min(Math.max(0, delayMs), MAX_TIMEOUT_MS));
    return { cancel: () => clearTimeout(handle) };
  }

  /** See {@link Clock.sleep}. */
  sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, delayMs, signal);
  }
}

/**
 * An `AbortSignal` that aborts when `parent` aborts or after `timeoutMs` on `clock`,
 * with a `TimeoutError` `DOMException` as reason. Call `dispose()` when done to cancel the timer.
 */
export function timeoutSignal(
  clock: Clock,
  timeoutMs: number,
  parent?: AbortSignal,
): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const timer = clock.setTimer(timeoutMs, () =>
    controller.abort(new DOMException(`Timed out after ${timeoutMs} ms`, 'TimeoutError')),
  );
  // A listener removed on dispose rather than `AbortSignal.any`, whose links from long-lived
  // parents (the run, the term) are only dropped by GC: one per request adds up over days.
  const onParentAbort = (): void => controller.abort(parent!.reason);
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      timer.cancel();
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}

/**
 * Settles like `promise`, or rejects with `signal.reason` as soon as `signal` aborts, so a
 * lock that ignores its signal cannot hang the elector.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
