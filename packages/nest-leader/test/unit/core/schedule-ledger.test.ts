import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decodeScheduleLedger,
  encodeScheduleLedger,
  SCHEDULE_LEDGER_LIMITS,
} from '../../../dist/esm/core/schedule-ledger/schedule-ledger.codec.js';
import {
  emptyScheduleLedger,
  mergeScheduleLedgers,
  recordSlotCompleted,
  limitScheduleLedger,
  recordSlotStarted,
  type ScheduleLedger,
} from '../../../dist/esm/core/schedule-ledger/schedule-ledger.js';

const t = (iso: string): Date => new Date(`2026-01-01T${iso}Z`);

describe('mergeScheduleLedgers: newer term wins', () => {
  test('a ledger written by a newer term is never overwritten by an older term', () => {
    const stored = recordSlotCompleted(emptyScheduleLedger(), 'job', {
      scheduledAt: t('00:00:05'),
      token: 8,
    });
    // The leader of term 7 was paused, resumes and writes a later slot.
    const stale = recordSlotCompleted(emptyScheduleLedger(), 'job', {
      scheduledAt: t('00:00:09'),
      token: 7,
    });
    const merged = mergeScheduleLedgers(stored, stale);
    assert.deepEqual(merged.jobs.job?.lastCompleted, { scheduledAt: t('00:00:05'), token: 8 });
    assert.deepEqual(merged.jobs.job?.lastStarted, { scheduledAt: t('00:00:05'), token: 8 });
  });

  test('within one term the later slot wins, in either argument order', () => {
    const a = recordSlotCompleted(emptyScheduleLedger(), 'job', {
      scheduledAt: t('00:00:05'),
      token: 3,
    });
    const b = recordSlotCompleted(emptyScheduleLedger(), 'job', {
      scheduledAt: t('00:00:06'),
      token: 3,
    });
    assert.deepEqual(mergeScheduleLedgers(a, b), mergeScheduleLedgers(b, a));
    assert.deepEqual(
      mergeScheduleLedgers(a, b).jobs.job?.lastCompleted?.scheduledAt,
      t('00:00:06'),
    );
  });

  test('jobs only one side knows are kept, and neither argument is changed', () => {
    const a = recordSlotStarted(emptyScheduleLedger(), 'a', {
      scheduledAt: t('00:00:01'),
      token: 1,
    });
    const b = recordSlotStarted(emptyScheduleLedger(), 'b', {
      scheduledAt: t('00:00:02'),
      token: 2,
    });
    const before = JSON.stringify([a, b]);
    assert.deepEqual(Object.keys(mergeScheduleLedgers(a, b).jobs).sort(), ['a', 'b']);
    assert.equal(JSON.stringify([a, b]), before);
  });

  test('starting a slot does not move the completion watermark', () => {
    let ledger = recordSlotCompleted(emptyScheduleLedger(), 'job', {
      scheduledAt: t('00:00:05'),
      token: 2,
    });
    ledger = recordSlotStarted(ledger, 'job', { scheduledAt: t('00:00:06'), token: 2 });
    assert.deepEqual(ledger.jobs.job?.lastCompleted?.scheduledAt, t('00:00:05'));
    assert.deepEqual(ledger.jobs.job?.lastStarted?.scheduledAt, t('00:00:06'));
  });
});

describe('schedule ledger codec', () => {
  const ledger: ScheduleLedger = {
    jobs: {
      'Billing.close': {
        lastStarted: { scheduledAt: t('01:00:00'), token: 12 },
        lastCompleted: { scheduledAt: t('00:00:00'), token: 11 },
      },
      'Reports.nightly': { lastStarted: { scheduledAt: t('00:30:00'), token: 12 } },
    },
  };

  test('round-trips a ledger', () => {
    assert.deepEqual(decodeScheduleLedger(encodeScheduleLedger(ledger)), { ledger });
  });

  test('absent or empty text is an empty ledger without a problem', () => {
    assert.deepEqual(decodeScheduleLedger(undefined), { ledger: { jobs: {} } });
    assert.deepEqual(decodeScheduleLedger('  '), { ledger: { jobs: {} } });
  });

  for (const [what, text] of [
    ['not JSON', '{"v":1,'],
    ['a JSON array', '[1,2]'],
    ['a JSON string', '"ledger"'],
    ['another format version', '{"v":2,"jobs":{}}'],
    ['a foreign object', '{"holderIdentity":"x"}'],
    ['jobs not an object', '{"v":1,"jobs":[]}'],
  ] as const) {
    test(`${what} reads as an empty ledger with a problem, never throws`, () => {
      const decoded = decodeScheduleLedger(text);
      assert.deepEqual(decoded.ledger, { jobs: {} });
      assert.equal(typeof decoded.problem, 'string');
    });
  }

  test('a malformed entry is dropped with a problem, the others kept', () => {
    const text = JSON.stringify({
      v: 1,
      jobs: {
        good: { c: ['2026-01-01T00:00:00.000Z', 3] },
        badDate: { c: ['yesterday', 3] },
        badToken: { s: ['2026-01-01T00:00:00.000Z', -1] },
        notObject: 7,
      },
    });
    const decoded = decodeScheduleLedger(text);
    assert.deepEqual(Object.keys(decoded.ledger.jobs), ['good']);
    assert.match(decoded.problem ?? '', /"badDate", "badToken", "notObject"/);
  });
});

describe('decodeScheduleLedger: a ledger written by a hostile peer is bounded', () => {
  const NOW_MS = t('12:00:00').getTime();
  const slot = (iso: string, token: number) => [iso, token];

  test('a text over 128 KiB is not parsed: empty, with a short problem', () => {
    const text = JSON.stringify({ v: 1, jobs: { job: { c: slot('x'.repeat(200_000), 1) } } });
    const decoded = decodeScheduleLedger(text, { nowMs: NOW_MS });
    assert.deepEqual(decoded.ledger, { jobs: {} });
    assert.match(decoded.problem!, /200\d{3} characters long, more than the 131072 read/);
  });

  test('10,000 entries: the first 512 are read, the problem counts them in one short line', () => {
    const jobs: Record<string, unknown> = {};
    for (let i = 0; i < 10_000; i++) jobs[`j${i}`] = {};
    const decoded = decodeScheduleLedger(JSON.stringify({ v: 1, jobs }), { nowMs: NOW_MS });
    assert.equal(Object.keys(decoded.ledger.jobs).length, SCHEDULE_LEDGER_LIMITS.maxJobs);
    assert.equal(
      decoded.problem,
      'the stored schedule ledger has 10000 jobs; reading the first 512',
    );
  });

  test('a token of a later term than the record, a time a year ahead, a huge name: dropped', () => {
    const text = JSON.stringify({
      v: 1,
      jobs: {
        good: { c: slot('2026-01-01T12:00:00.000Z', 7) },
        skewed: { c: slot('2026-01-01T13:00:00.000Z', 7) }, // an hour ahead: clock skew
        laterTerm: { c: slot('2026-01-01T11:00:00.000Z', 8) },
        yearAhead: { s: slot('2027-01-01T00:00:00.000Z', 7) },
        before1970: { s: slot('1969-12-31T00:00:00.000Z', 7) },
        ['n'.repeat(300)]: { c: slot('2026-01-01T11:00:00.000Z', 7) },
        ['\nforged log line']: 7,
      },
    });
    const decoded = decodeScheduleLedger(text, { maxToken: 7, nowMs: NOW_MS });
    assert.deepEqual(Object.keys(decoded.ledger.jobs), ['good', 'skewed']);
    assert.ok(decoded.problem!.length < 300, decoded.problem);
    assert.match(
      decoded.problem!,
      /5 malformed entries \("laterTerm", "yearAhead", "before1970", …/,
    );
    assert.doesNotMatch(decoded.problem!, /\n/, 'no raw newline from a job name');
  });
});

describe('limitScheduleLedger', () => {
  test("keeps this process's jobs, then the most recently run, up to the bound", () => {
    let ledger = emptyScheduleLedger();
    for (let i = 1; i <= 5; i++) {
      ledger = recordSlotStarted(ledger, `peer${i}`, { scheduledAt: t(`00:00:0${i}`), token: 3 });
    }
    ledger = recordSlotStarted(ledger, 'ours', { scheduledAt: t('00:00:00'), token: 1 });
    const limited = limitScheduleLedger(ledger, 3, new Set(['ours']));
    assert.deepEqual(Object.keys(limited.jobs).sort(), ['ours', 'peer4', 'peer5']);
    assert.equal(limitScheduleLedger(ledger, 6), ledger, 'within the bound: unchanged');
  });
});
