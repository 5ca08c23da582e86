import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from 'nest-leader/testing';

describe('ManualClock', () => {
  test('advance() fires due timers in order of due time, then stops at the target', async () => {
    const clock = new ManualClock();
    const fired: string[] = [];
    clock.setTimer(300, () => fired.push(`c@${clock.nowMs()}`));
    clock.setTimer(100, () => fired.push(`a@${clock.nowMs()}`));
    clock.setTimer(100, () => fired.push(`b@${clock.nowMs()}`));
    clock.setTimer(500, () => fired.push('late'));

    await clock.advance(300);

    assert.deepEqual(fired, ['a@100', 'b@100', 'c@300']);
    assert.equal(clock.nowMs(), 300);
    assert.equal(clock.pendingTimers, 1);
  });

  test('timers set while advancing fire within the same advance when due', async () => {
    const clock = new ManualClock();
    const fired: number[] = [];
    const tick = (): void => {
      fired.push(clock.nowMs());
      clock.setTimer(100, tick);
    };
    clock.setTimer(100, tick);

    await clock.advance(350);

    assert.deepEqual(fired, [100, 200, 300]);
  });

  test('promise chains started by a timer settle before the next timer fires', async () => {
    const clock = new ManualClock();
    const order: string[] = [];
    clock.setTimer(10, () => {
      void Promise.resolve()
        .then(() => Promise.resolve())
        .then(() => order.push('chain done'));
    });
    clock.setTimer(20, () => order.push('second timer'));

    await clock.advance(20);

    assert.deepEqual(order, ['chain done', 'second timer']);
  });

  test('sleep() resolves early when its signal aborts', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    let woke = false;
    void clock.sleep(1000, controller.signal).then(() => (woke = true));

    controller.abort();
    await clock.settle();

    assert.equal(woke, true);
    assert.equal(clock.pendingTimers, 0);
  });

  test('jump() moves time without firing timers; the next advance fires them', async () => {
    const clock = new ManualClock();
    let fired = false;
    clock.setTimer(100, () => (fired = true));

    clock.jump(1000);
    assert.equal(fired, false);
    await clock.advance(0);

    assert.equal(fired, true);
  });

  test('the wall clock follows monotonic time and can jump on its own', async () => {
    const clock = new ManualClock({ wallTime: new Date('2026-01-30T10:00:00Z') });
    await clock.advance(1500);
    assert.equal(clock.wallNow().toISOString(), '2026-01-30T10:00:01.500Z');

    clock.setWallTime(new Date('2020-01-01T00:00:00Z'));

    assert.equal(clock.nowMs(), 1500);
    assert.equal(clock.wallNow().toISOString(), '2020-01-01T00:00:00.000Z');
  });
});
