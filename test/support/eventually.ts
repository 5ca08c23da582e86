/** Polling instead of sleeping: retry an assertion until it passes or time runs out. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Calls `check` every `intervalMs` until it returns without throwing, and returns its value.
 * @throws the last assertion error, once `timeoutMs` has passed.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: { timeoutMs: number; intervalMs?: number },
): Promise<T> {
  const deadline = performance.now() + options.timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (performance.now() >= deadline) throw error;
    }
    await sleep(options.intervalMs ?? 100);
  }
}

/**
 * `value`, asserted present: the check for {@link eventually} that waits for something to be
 * found (`eventually(() => found(events.find(…), 'a takeover'), …)` resolves to the event).
 * `what` may be a function, for a message that is costly to build (called only on failure).
 * @throws an `AssertionError` with message `what` while `value` is `undefined`.
 */
export function found<T>(value: T | undefined, what: string | (() => string)): T {
  if (value === undefined) assert.fail(typeof what === 'string' ? what : what());
  return value;
}
