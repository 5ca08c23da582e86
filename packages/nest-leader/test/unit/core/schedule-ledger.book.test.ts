import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LeaderElector } from 'nest-leader/core';
import {
  ScheduleLedgerBook,
  type ScheduleLedgerTerm,
} from '../../../dist/esm/core/schedule-ledger/schedule-ledger.book.js';
import { decodeScheduleLedger } from '../../../dist/esm/core/schedule-ledger/schedule-ledger.codec.js';
import { intervalSchedule } from '../../../dist/esm/core/schedule-ledger/schedule-slots.js';
import { ManualClock, MemoryLock } from 'nest-leader/testing';

const START = new Date('2026-01-01T00:00:00Z');
const at = (seconds: number): Date => new Date(START.getTime() + seconds * 1000);
const everySecond = intervalSchedule(1000, START);
const JOB = 'Billing.close';
const ALL = { catchUp: 'all', horizonMs: 60_000, maxCatchUp: 100 } as const;

function replica(identity: string, lock: MemoryLock, clock: ManualClock) {
  const book = new ScheduleLedgerBook();
  const terms: ScheduleLedgerTerm[] = [];
  const elector = new LeaderElector({
    lock,
    identity,
    clock,
    random: () => 0,
    releaseOnStop: false, // stop() leaves the Lease held: a crash as the others see it
    logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    scheduleLedger: book.writer,
    callbacks: {
      onStartedLeading: (term) => void terms.push(book.beginTerm(term.leaseTransitions)),
    },
  });
  return { book, terms, elector };
}

describe('ScheduleLedgerBook across a crash failover (elector on MemoryLock, manual clock)', () => {
  test('the new leader plans the slots its predecessor missed, redoes the one it left unfinished, and its ledger wins', async () => {
    const clock = new ManualClock({ wallTime: START });
    const lock = new MemoryLock({ name: 'jobs' });
    const a = replica('a', lock, clock);
    const b = replica('b', lock, clock);
    a.elector.start();
    await clock.advance(0);
    b.elector.start();
    for (let slot = 1; slot <= 5; slot++) {
      await clock.advance(1000);
      const term = a.terms.at(-1)!;
      term.begin(JOB, at(slot));
      if (slot < 5) term.settle(JOB, at(slot)); // slot 5 is still running when a dies
    }
    await clock.advance(1500); // a's renewal at 6 s carries the ledger
    await a.elector.stop(); // crash at 6.5 s

    await clock.advance(20_000);
    assert.equal(b.elector.isLeader(), true);
    const termB = b.terms.at(-1)!;
    const now = clock.wallNow();
    const plan = termB.plan(JOB, everySecond, now, ALL);

    const newest = Math.floor((now.getTime() - START.getTime()) / 1000);
    assert.deepEqual(plan.run[0], at(5));
    assert.deepEqual(plan.run.at(-1), at(newest));
    assert.equal(plan.run.length, newest - 4);
    assert.deepEqual(plan.redo, at(5));

    for (const slot of plan.run) termB.begin(JOB, slot);
    for (const slot of [...plan.run].reverse()) termB.settle(JOB, slot); // newest finishes first
    await clock.advance(2000);

    const stored = decodeScheduleLedger(lock.read()!.record.scheduleLedger).ledger.jobs[JOB]!;
    assert.deepEqual(stored.lastCompleted, { scheduledAt: at(newest), token: termB.token });
    assert.ok(termB.token > a.terms.at(-1)!.token);
    await b.elector.stop();
  });

  test('a newer slot finishing first does not move the watermark past an older one still running', () => {
    const book = new ScheduleLedgerBook();
    const term = book.beginTerm(3);
    term.begin(JOB, at(1));
    term.settle(JOB, at(1));
    term.begin(JOB, at(2));
    term.begin(JOB, at(3));
    term.settle(JOB, at(3));
    assert.deepEqual(book.entry(JOB)?.lastCompleted, { scheduledAt: at(1), token: 3 });
    term.settle(JOB, at(2));
    assert.deepEqual(book.entry(JOB)?.lastCompleted, { scheduledAt: at(3), token: 3 });
  });

  test('a corrupt stored ledger is reported once and read as empty; the writer still returns ours', () => {
    const problems: string[] = [];
    const book = new ScheduleLedgerBook((problem) => problems.push(problem));
    book.beginTerm(1).begin(JOB, at(1));
    const first = book.writer('not json', 1);
    book.writer('not json', 1);
    assert.equal(problems.length, 1);
    assert.deepEqual(decodeScheduleLedger(first).ledger.jobs[JOB]?.lastStarted, {
      scheduledAt: at(1),
      token: 1,
    });
  });

  test("a peer's ledger of 10,000 jobs: one problem reported, the ledger written back is bounded and keeps ours", () => {
    const problems: string[] = [];
    const book = new ScheduleLedgerBook((problem) => problems.push(problem));
    book.beginTerm(4).begin(JOB, at(1));
    const jobs: Record<string, unknown> = {};
    // Short names, so the 10,000 fit the 128 KiB a ledger text may have (a longer one reads empty).
    for (let i = 0; i < 10_000; i++) jobs[`p${i}`] = {};
    const hostile = JSON.stringify({ v: 1, jobs });
    assert.ok(hostile.length < 128 * 1024);

    const written = book.writer(hostile, 4)!;
    book.writer(hostile, 4);
    const again = book.writer(written, 5);

    assert.equal(problems.length, 1);
    const read = decodeScheduleLedger(written).ledger.jobs;
    assert.equal(Object.keys(read).length, 512);
    assert.deepEqual(read[JOB]?.lastStarted, { scheduledAt: at(1), token: 4 }, 'ours kept');
    assert.ok(written.length < 40_000, `${written.length} characters`);
    assert.equal(Object.keys(decodeScheduleLedger(again).ledger.jobs).length, 512);
  });

  test('what an older term of this process recorded never overwrites what a newer term stored', () => {
    const book = new ScheduleLedgerBook();
    const old = book.beginTerm(2);
    old.begin(JOB, at(9));
    old.settle(JOB, at(9));
    const newer = JSON.stringify({
      v: 1,
      jobs: { [JOB]: { s: [at(4).toISOString(), 5], c: [at(4).toISOString(), 5] } },
    });
    const written = decodeScheduleLedger(book.writer(newer, 5)).ledger.jobs[JOB];
    assert.deepEqual(written?.lastCompleted, { scheduledAt: at(4), token: 5 });
  });
});

describe('ScheduleLedgerTerm: a long term', () => {
  test('remembers the recent slots it took, not every slot of months', () => {
    const term = new ScheduleLedgerBook().beginTerm(3);
    for (let s = 1; s <= 5000; s++) {
      term.begin(JOB, at(s));
      term.settle(JOB, at(s));
    }
    assert.ok(term.isTaken(JOB, at(5000)), 'the newest slot is taken');
    assert.ok(term.isTaken(JOB, at(4000)), 'a recent slot is taken');
    assert.ok(!term.isTaken(JOB, at(1)), 'the oldest slots are forgotten');
  });
});
