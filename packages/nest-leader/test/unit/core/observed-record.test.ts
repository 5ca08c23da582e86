import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LeaseRecord } from 'nest-leader/core';
import {
  ObservedRecord,
  sameElectionRecord,
  validTransitions,
} from '../../../dist/esm/core/election/observed-record.js';
import { ManualClock } from 'nest-leader/testing';

const LEASE_DURATION_MS = 15_000;

function held(holderIdentity: string, overrides: Partial<LeaseRecord> = {}): LeaseRecord {
  return {
    holderIdentity,
    leaseDurationSeconds: 15,
    acquireTime: new Date('2026-01-01T00:00:00Z'),
    renewTime: new Date('2026-01-01T00:00:00Z'),
    leaseTransitions: 3,
    ...overrides,
  };
}

describe('ObservedRecord (client-go observedRecord/observedTime)', () => {
  test('the observed time moves only when the election record changes, not with its version', async () => {
    const clock = new ManualClock();
    const observed = new ObservedRecord(clock, LEASE_DURATION_MS);
    observed.observe({ record: held('a'), version: '1' });

    await clock.advance(5_000);
    observed.observe({ record: held('a'), version: '2' }); // a label written by someone else
    assert.equal(observed.observedAtMs, 0);
    assert.equal(observed.version, '2');

    observed.observe({
      record: held('a', { renewTime: new Date('2026-01-01T00:00:05Z') }),
      version: '3',
    });
    assert.equal(observed.observedAtMs, 5_000);
  });

  test('expiry is the record’s leaseDuration after the last change, on the local clock', async () => {
    const clock = new ManualClock();
    const observed = new ObservedRecord(clock, LEASE_DURATION_MS);
    // A renewTime far in the past by the wall clock does not matter: only our sighting does.
    observed.observe({
      record: held('a', { leaseDurationSeconds: 20, renewTime: new Date('2000-01-01T00:00:00Z') }),
      version: '1',
    });

    await clock.advance(19_999);
    assert.equal(observed.msUntilExpiry(), 1);
    assert.equal(observed.expired(), false);
    await clock.advance(1);
    assert.equal(observed.expired(), true);
  });

  test('a record with an invalid leaseDurationSeconds expires after our own leaseDuration', async () => {
    const clock = new ManualClock();
    const observed = new ObservedRecord(clock, LEASE_DURATION_MS);
    observed.observe({ record: held('a', { leaseDurationSeconds: Number.NaN }), version: '1' });

    assert.equal(observed.msUntilExpiry(), LEASE_DURATION_MS);
  });

  test('nothing to wait for before the first sighting or when the Lease is free', () => {
    const observed = new ObservedRecord(new ManualClock(), LEASE_DURATION_MS);
    assert.equal(observed.msUntilExpiry(), Infinity);

    observed.observe({ record: held(''), version: '1' });
    assert.equal(observed.msUntilExpiry(), Infinity);
    assert.equal(observed.expired(), false);
  });

  test('observe() says when the holder changed, the first sighting included', () => {
    const observed = new ObservedRecord(new ManualClock(), LEASE_DURATION_MS);

    assert.equal(observed.observe({ record: held('a'), version: '1' }), true);
    assert.equal(
      observed.observe({ record: held('a', { leaseTransitions: 4 }), version: '2' }),
      false,
    );
    assert.equal(observed.observe({ record: held(''), version: '3' }), true);
    assert.equal(observed.observe({ record: held('b'), version: '4' }), true);
  });

  test('keeps a copy: changing the caller’s record later changes nothing', () => {
    const observed = new ObservedRecord(new ManualClock(), LEASE_DURATION_MS);
    const record = held('a');
    observed.observe({ record, version: '1' });

    record.holderIdentity = 'mallory';
    record.renewTime!.setTime(0);

    assert.equal(observed.record?.holderIdentity, 'a');
    assert.equal(observed.record?.renewTime?.toISOString(), '2026-01-01T00:00:00.000Z');
  });

  test('remembers the highest valid leaseTransitions seen, also after a lower one', () => {
    const observed = new ObservedRecord(new ManualClock(), LEASE_DURATION_MS);
    assert.equal(observed.highestTransitions, undefined);

    observed.observe({ record: held('a', { leaseTransitions: 9 }), version: '1' });
    observed.observe({ record: held('b', { leaseTransitions: 2 }), version: '2' }); // recreated
    observed.observe({ record: held('c', { leaseTransitions: -5 }), version: '3' });

    assert.equal(observed.highestTransitions, 9);
  });

  test('a missing Lease never seen held may be created at once', () => {
    const observed = new ObservedRecord(new ManualClock(), LEASE_DURATION_MS);

    assert.deepEqual(observed.leaseMissing(), { waitMs: 0, firstWait: false });
  });

  test('a missing Lease last seen held waits for its expiry and a leaseDuration since it went missing', async () => {
    const clock = new ManualClock();
    const observed = new ObservedRecord(clock, LEASE_DURATION_MS);
    observed.observe({ record: held('a', { leaseDurationSeconds: 30 }), version: '1' });

    await clock.advance(2_000);
    assert.deepEqual(observed.leaseMissing(), { waitMs: 28_000, firstWait: true });
    await clock.advance(20_000);
    assert.deepEqual(observed.leaseMissing(), { waitMs: 8_000, firstWait: false });
    await clock.advance(8_000);
    assert.equal(observed.leaseMissing().waitMs, 0);
  });

  test('a stale sighting still waits a full leaseDuration from when the Lease went missing', async () => {
    const clock = new ManualClock();
    const observed = new ObservedRecord(clock, LEASE_DURATION_MS);
    observed.observe({ record: held('a'), version: '1' });

    await clock.advance(60_000); // the record expired long ago by our observation

    assert.deepEqual(observed.leaseMissing(), { waitMs: LEASE_DURATION_MS, firstWait: true });
  });

  test('once the Lease is seen again, a later disappearance starts a new wait, reported again', async () => {
    const clock = new ManualClock();
    const observed = new ObservedRecord(clock, LEASE_DURATION_MS);
    observed.observe({ record: held('a'), version: '1' });
    observed.leaseMissing();
    await clock.advance(40_000);

    observed.leasePresent();

    assert.deepEqual(observed.leaseMissing(), { waitMs: LEASE_DURATION_MS, firstWait: true });
  });

  test('differsFrom() compares election records only, and is false before any sighting', () => {
    const observed = new ObservedRecord(new ManualClock(), LEASE_DURATION_MS);
    assert.equal(observed.differsFrom(held('a')), false);

    observed.observe({ record: held('a'), version: '1' });

    assert.equal(observed.differsFrom(held('a', { strategy: 'OldestEmulationVersion' })), false);
    assert.equal(observed.differsFrom(held('a', { leaseTransitions: 4 })), true);
  });
});

describe('sameElectionRecord', () => {
  test('compares holder, duration, transitions and times by value', () => {
    assert.equal(sameElectionRecord(held('a'), held('a')), true);
    assert.equal(sameElectionRecord(held('a'), held('b')), false);
    assert.equal(sameElectionRecord(held('a'), held('a', { leaseDurationSeconds: 16 })), false);
    assert.equal(sameElectionRecord(held('a'), held('a', { acquireTime: undefined })), false);
    const nan = held('a', { leaseTransitions: Number.NaN });
    assert.equal(sameElectionRecord(nan, held('a', { leaseTransitions: Number.NaN })), true);
  });
});

describe('validTransitions', () => {
  test('clamps to a non-negative int32', () => {
    assert.equal(validTransitions(5), 5);
    assert.equal(validTransitions(5.7), 5);
    assert.equal(validTransitions(-1), 0);
    assert.equal(validTransitions(Number.NaN), 0);
    assert.equal(validTransitions(Number.POSITIVE_INFINITY), 0);
    assert.equal(validTransitions(2 ** 40), 2 ** 31 - 1);
  });
});
