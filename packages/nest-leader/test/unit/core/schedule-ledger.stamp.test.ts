import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LeaseRecord } from 'nest-leader/core';
import { scheduleLedgerStamp } from '../../../dist/esm/core/schedule-ledger/schedule-ledger.stamp.js';
import { MemoryLock, RecordingLogger } from 'nest-leader/testing';

const lock = new MemoryLock({ name: 'test' });

const record: LeaseRecord = {
  holderIdentity: 'a',
  leaseDurationSeconds: 15,
  leaseTransitions: 4,
  scheduleLedger: 'stored',
};

describe('scheduleLedgerStamp', () => {
  test('without a writer the record is returned as it is', () => {
    const stamp = scheduleLedgerStamp({
      scheduleLedger: undefined,
      logger: new RecordingLogger(),
      lock,
    });

    assert.equal(stamp(record), record);
  });

  test("the writer is given the stored text and the record's leaseTransitions; its text is written", () => {
    const calls: [string | undefined, number][] = [];
    const stamp = scheduleLedgerStamp({
      scheduleLedger: (stored, leaseTransitions) => {
        calls.push([stored, leaseTransitions]);
        return 'new';
      },
      logger: new RecordingLogger(),
      lock,
    });

    const stamped = stamp(record);

    assert.deepEqual(calls, [['stored', 4]]);
    assert.deepEqual(stamped, { ...record, scheduleLedger: 'new' });
    assert.equal(record.scheduleLedger, 'stored', 'the record given is not changed');
  });

  test('a writer that answers undefined keeps the stored text', () => {
    const stamp = scheduleLedgerStamp({
      scheduleLedger: () => undefined,
      logger: new RecordingLogger(),
      lock,
    });

    assert.equal(stamp(record), record);
  });

  test('a writer that throws keeps the stored text, with a warning naming the lock', () => {
    const logger = new RecordingLogger();
    const stamp = scheduleLedgerStamp({
      scheduleLedger: () => {
        throw new Error('boom');
      },
      logger,
      lock,
    });

    assert.equal(stamp(record), record);
    assert.equal(logger.lines.length, 1);
    assert.equal(logger.lines[0]!.level, 'warn');
    assert.match(logger.lines[0]!.message, /MemoryLock test.*boom/);
  });
});
