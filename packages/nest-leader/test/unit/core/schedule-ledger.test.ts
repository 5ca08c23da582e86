import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decodeScheduleLedger,
  emptyScheduleLedger,
  encodeScheduleLedger,
  mergeScheduleLedgers,
  recordSlotCompleted,
  recordSlotStarted,
  type ScheduleLedger,
} from 'nest-leader';

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
