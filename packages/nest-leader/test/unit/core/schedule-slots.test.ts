import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  dueSlots,
  intervalSchedule,
} from '../../../dist/esm/core/schedule-ledger/schedule-slots.js';

const at = (ms: number): Date => new Date(Date.UTC(2026, 0, 1) + ms);

describe('intervalSchedule', () => {
  test('slots are whole periods from the anchor, strictly after the given time', () => {
    const schedule = intervalSchedule(1000, at(0));
    assert.deepEqual(schedule.nextAfter(at(0)), at(1000));
    assert.deepEqual(schedule.nextAfter(at(999)), at(1000));
    assert.deepEqual(schedule.nextAfter(at(-5000)), at(0));
  });

  test('rejects a period that is not a whole number of milliseconds > 0', () => {
    for (const periodMs of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => intervalSchedule(periodMs), RangeError);
    }
  });
});

describe('dueSlots', () => {
  const schedule = intervalSchedule(1000, at(0));

  test('the span excludes its start and includes its end', () => {
    assert.deepEqual(dueSlots(schedule, at(1000), at(3000), 10), {
      slots: [at(2000), at(3000)],
      omitted: 0,
    });
  });

  test('keeps the newest `limit` slots and counts the older ones', () => {
    assert.deepEqual(dueSlots(schedule, at(0), at(5000), 2), {
      slots: [at(4000), at(5000)],
      omitted: 3,
    });
  });

  test('stops counting at the cap', () => {
    assert.equal(dueSlots(schedule, at(0), at(10_000_000), 0, 500).omitted, 500);
  });

  test('a schedule that ends yields no more slots', () => {
    const once = { nextAfter: (after: Date) => (after < at(500) ? at(500) : undefined) };
    assert.deepEqual(dueSlots(once, at(0), at(5000), 10), { slots: [at(500)], omitted: 0 });
  });
});
