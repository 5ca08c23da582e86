import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LockConflictError } from 'nest-leader';
import { MemoryLock } from 'nest-leader/testing';

const record = { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 };

describe('MemoryLock', () => {
  test('create, get and update with versions', async () => {
    const lock = new MemoryLock({ name: 'jobs' });
    assert.equal(await lock.get(), undefined);

    const v1 = await lock.create(record);
    const v2 = await lock.update({ ...record, holderIdentity: 'b' }, v1);

    assert.notEqual(v1, v2);
    assert.deepEqual(await lock.get(), { record: { ...record, holderIdentity: 'b' }, version: v2 });
    assert.equal(lock.description, 'MemoryLock jobs');
  });

  test('keeps the schedule ledger text with the record', async () => {
    const lock = new MemoryLock({ name: 'jobs' });
    const version = await lock.create({ ...record, scheduleLedger: '{"v":1,"jobs":{}}' });
    assert.deepEqual(await lock.get(), {
      record: { ...record, scheduleLedger: '{"v":1,"jobs":{}}' },
      version,
    });
  });

  test('create of an existing record and update of a stale version conflict', async () => {
    const lock = new MemoryLock();
    const v1 = await lock.create(record);
    await lock.update(record, v1);

    await assert.rejects(lock.create(record), LockConflictError);
    await assert.rejects(lock.update(record, v1), LockConflictError);
  });

  test('callers never share mutable state with the lock', async () => {
    const lock = new MemoryLock();
    const renewTime = new Date(0);
    await lock.create({ ...record, renewTime });
    renewTime.setTime(999);

    const read = (await lock.get())!;
    read.record.renewTime!.setTime(1234);

    assert.equal(lock.read()!.record.renewTime!.getTime(), 0);
  });

  test('failNext rejects the next calls of an operation with the given error', async () => {
    const lock = new MemoryLock();
    const boom = new Error('boom');
    lock.failNext('get', boom, 2);

    await assert.rejects(lock.get(), boom);
    await assert.rejects(lock.get(), boom);
    assert.equal(await lock.get(), undefined);
    assert.equal(lock.calls.get, 3);
  });

  test('hangNext never settles until the signal aborts, then rejects with its reason', async () => {
    const lock = new MemoryLock();
    lock.hangNext('create');
    const controller = new AbortController();
    const pending = lock.create(record, controller.signal);

    controller.abort(new Error('gave up'));

    await assert.rejects(pending, /gave up/);
    assert.equal(lock.read(), undefined);
  });

  test('an already aborted signal rejects at once', async () => {
    const lock = new MemoryLock();
    await assert.rejects(lock.get(AbortSignal.abort(new Error('aborted'))), /aborted/);
  });

  test('set and delete act as a foreign writer; writes records every write', async () => {
    const lock = new MemoryLock();
    const v1 = await lock.create(record);
    lock.set({ ...record, holderIdentity: 'x' });
    await assert.rejects(lock.update(record, v1), LockConflictError);
    lock.delete();

    assert.equal(lock.read(), undefined);
    assert.deepEqual(
      lock.writes.map((w) => [w.operation, w.record.holderIdentity]),
      [
        ['create', 'a'],
        ['set', 'x'],
      ],
    );
  });

  test('keeps only the last 1000 writes, so a long-running memory lock does not grow', () => {
    const lock = new MemoryLock();
    for (let i = 0; i < 1005; i++) lock.set({ ...record, leaseTransitions: i });

    const writes = lock.writes;
    assert.equal(writes.length, 1000);
    assert.equal(writes[0]!.record.leaseTransitions, 5);
    assert.equal(writes.at(-1)!.record.leaseTransitions, 1004);
  });
});
