import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type LeaseRecord, scheduleLedgerStamp } from 'nest-leader';
import { RecordingLogger } from 'nest-leader/testing';

const LOCK = 'Lease default/test';

const record: LeaseRecord = {
  holderIdentity: 'a',
  leaseDurationSeconds: 15,
  leaseTransitions: 4,
  scheduleLedger: 'stored',
};

describe('scheduleLedgerStamp', () => {
  test('without a writer the record is returned as it is', () => {
    const stamp = scheduleLedgerStamp(undefined, new RecordingLogger(), LOCK);

    assert.equal(stamp(record), record);
  });

  test("the writer is given the stored text and the record's leaseTransitions; its text is written", () => {
    const calls: [string | undefined, number][] = [];
    const stamp = scheduleLedgerStamp(
      (stored, leaseTransitions) => {
        calls.push([stored, leaseTransitions]);
        return 'new';
      },
      new RecordingLogger(),
      LOCK,
    );

    const stamped = stamp(record);

    assert.deepEqual(calls, [['stored', 4]]);
    assert.deepEqual(stamped, { ...record, scheduleLedger: 'new' });
    assert.equal(record.scheduleLedger, 'stored', 'the record given is not changed');
  });

  test('a writer that answers undefined keeps the stored text', () => {
    const stamp = scheduleLedgerStamp(() => undefined, new RecordingLogger(), LOCK);

    assert.equal(stamp(record), record);
  });

  test('a writer that throws keeps the stored text, with a warning naming the lock', () => {
    const logger = new RecordingLogger();
    const stamp = scheduleLedgerStamp(
      () => {
        throw new Error('boom');
      },
      logger,
      LOCK,
    );

    assert.equal(stamp(record), record);
    assert.equal(logger.lines.length, 1);
    assert.equal(logger.lines[0]!.level, 'warn');
    assert.match(logger.lines[0]!.message, /Lease default\/test.*boom/);
  });
});
