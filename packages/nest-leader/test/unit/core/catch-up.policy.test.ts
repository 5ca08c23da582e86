import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CatchUpOptions, CatchUpPolicy } from 'nest-leader';
import { defaultHorizonMs } from 'nest-leader/core';
import { planCatchUp } from '../../../dist/esm/core/schedule-ledger/catch-up.policy.js';
import {
  emptyScheduleLedger,
  recordSlotCompleted,
  recordSlotStarted,
  type ScheduleLedger,
} from '../../../dist/esm/core/schedule-ledger/schedule-ledger.js';
import { intervalSchedule } from '../../../dist/esm/core/schedule-ledger/schedule-slots.js';
import { ManualClock } from 'nest-leader/testing';

const START = new Date('2026-01-01T00:00:00Z');
const everySecond = intervalSchedule(1000);
const JOB = 'Billing.close';

function at(seconds: number): Date {
  return new Date(START.getTime() + seconds * 1000);
}

function options(catchUp: CatchUpPolicy, extra: Partial<CatchUpOptions> = {}): CatchUpOptions {
  return { catchUp, horizonMs: 60_000, maxCatchUp: 100, ...extra };
}

/** The old leader (term 1) ran every slot through `completedUpTo`, then began `startedOnly` if given. */
function oldLeaderLedger(completedUpTo: number, startedOnly?: number): ScheduleLedger {
  let ledger = emptyScheduleLedger();
  for (let s = 1; s <= completedUpTo; s++) {
    ledger = recordSlotStarted(ledger, JOB, { scheduledAt: at(s), token: 1 });
    ledger = recordSlotCompleted(ledger, JOB, { scheduledAt: at(s), token: 1 });
  }
  if (startedOnly !== undefined) {
    ledger = recordSlotStarted(ledger, JOB, { scheduledAt: at(startedOnly), token: 1 });
  }
  return ledger;
}

/** A crash failover at the default timings: the new leader's term begins ~19 s after the crash. */
async function newTermBegins(crashAtSeconds: number, failoverMs = 19_400): Promise<Date> {
  const clock = new ManualClock({ wallTime: START });
  await clock.advance(crashAtSeconds * 1000 + failoverMs);
  return clock.wallNow();
}

// Phases of the tick at which the leader dies: slot 10 is the tick in question.
const phases = {
  // died just before slot 10 started: 1..9 complete
  before: { ledger: () => oldLeaderLedger(9), crashAt: 9.9, firstMissed: 10, redo: undefined },
  // died while slot 10 ran: started, not completed
  during: { ledger: () => oldLeaderLedger(9, 10), crashAt: 10.2, firstMissed: 10, redo: 10 },
  // died just after slot 10 completed
  after: { ledger: () => oldLeaderLedger(10), crashAt: 10.2, firstMissed: 11, redo: undefined },
} as const;

describe('planCatchUp across a crash failover', () => {
  for (const [phase, p] of Object.entries(phases)) {
    test(`'skip', leader died ${phase} the slot: nothing runs late, every missed slot is counted skipped`, async () => {
      const now = await newTermBegins(p.crashAt);
      const missed = Math.floor((now.getTime() - START.getTime()) / 1000) - p.firstMissed + 1;
      const plan = planCatchUp(everySecond, p.ledger().jobs[JOB], now, options('skip'));
      assert.deepEqual(plan.run, []);
      assert.equal(plan.skipped, missed);
      assert.equal(plan.redo, undefined);
    });

    test(`'once', leader died ${phase} the slot: the newest missed slot runs once, the rest are skipped`, async () => {
      const now = await newTermBegins(p.crashAt);
      const newest = Math.floor((now.getTime() - START.getTime()) / 1000);
      const plan = planCatchUp(everySecond, p.ledger().jobs[JOB], now, options('once'));
      assert.deepEqual(plan.run, [at(newest)]);
      assert.equal(plan.skipped, newest - p.firstMissed);
    });

    test(`'all', leader died ${phase} the slot: every missed slot runs, oldest first, the unfinished one redone`, async () => {
      const now = await newTermBegins(p.crashAt);
      const newest = Math.floor((now.getTime() - START.getTime()) / 1000);
      const plan = planCatchUp(everySecond, p.ledger().jobs[JOB], now, options('all'));
      const expected = [];
      for (let s = p.firstMissed; s <= newest; s++) expected.push(at(s));
      assert.deepEqual(plan.run, expected);
      assert.equal(plan.skipped, 0);
      assert.deepEqual(plan.redo, p.redo === undefined ? undefined : at(p.redo));
    });
  }
});

describe('planCatchUp limits', () => {
  test("'all' runs at most maxCatchUp slots, the newest ones, and counts the older as skipped", () => {
    const plan = planCatchUp(
      everySecond,
      oldLeaderLedger(5).jobs[JOB],
      at(25),
      options('all', { maxCatchUp: 3 }),
    );
    assert.deepEqual(plan.run, [at(23), at(24), at(25)]);
    assert.equal(plan.skipped, 17);
    assert.equal(plan.expired, 0);
  });

  test('a slot older than the horizon is never run late, under any policy', () => {
    for (const catchUp of ['skip', 'once', 'all'] as const) {
      const plan = planCatchUp(
        everySecond,
        oldLeaderLedger(5).jobs[JOB],
        at(25),
        options(catchUp, { horizonMs: 10_000 }),
      );
      assert.ok(
        plan.run.every((slot) => slot.getTime() >= at(15).getTime()),
        catchUp,
      );
      assert.equal(plan.expired, 9, catchUp); // slots 6..14
    }
  });

  test('a slot exactly at the horizon still runs', () => {
    const plan = planCatchUp(
      everySecond,
      oldLeaderLedger(5).jobs[JOB],
      at(25),
      options('all', { horizonMs: 10_000 }),
    );
    assert.deepEqual(plan.run[0], at(15));
    assert.equal(plan.run.length, 11);
  });

  test('a job the ledger has never seen complete has nothing to catch up', () => {
    assert.deepEqual(planCatchUp(everySecond, undefined, at(25), options('all')), {
      run: [],
      redo: undefined,
      skipped: 0,
      expired: 0,
    });
  });

  test('no slot missed when the new term begins before the next tick', () => {
    const plan = planCatchUp(
      everySecond,
      oldLeaderLedger(5).jobs[JOB],
      new Date(at(5).getTime() + 900),
      options('all'),
    );
    assert.deepEqual(plan, { run: [], redo: undefined, skipped: 0, expired: 0 });
  });

  test('the default horizon covers four crash failovers at the election timings and at least a minute', () => {
    assert.equal(defaultHorizonMs(15, 2), 77_600);
    assert.equal(defaultHorizonMs(2, 1), 60_000);
    const plan = planCatchUp(
      everySecond,
      oldLeaderLedger(9).jobs[JOB],
      at(9.9 + 19.4),
      options('once', { horizonMs: defaultHorizonMs(15, 2) }),
    );
    assert.equal(plan.expired, 0);
  });
});
