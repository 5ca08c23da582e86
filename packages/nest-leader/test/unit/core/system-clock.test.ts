import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SystemClock } from 'nest-leader/core';

describe('SystemClock', () => {
  const clock = new SystemClock();

  test('nowMs() is monotonic performance time, wallNow() is the wall clock', () => {
    const a = clock.nowMs();
    const b = clock.nowMs();
    assert.ok(b >= a);
    assert.ok(Math.abs(clock.wallNow().getTime() - Date.now()) < 50);
  });

  test('sleep() waits at least the delay on the monotonic clock', async () => {
    const start = clock.nowMs();
    await clock.sleep(30);
    assert.ok(clock.nowMs() - start >= 29);
  });

  test('sleep() resolves at once when its signal aborts', async () => {
    const controller = new AbortController();
    const start = clock.nowMs();
    const sleeping = clock.sleep(10_000, controller.signal);
    controller.abort();
    await sleeping;
    assert.ok(clock.nowMs() - start < 1000);
  });

  test('a cancelled timer never fires', async () => {
    let fired = false;
    clock.setTimer(10, () => (fired = true)).cancel();
    await clock.sleep(30);
    assert.equal(fired, false);
  });
});
