import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { HolderLiveness, LeaseRecord } from 'nest-leader/core';
import {
  type HolderCheckContext,
  HolderChecks,
} from '../../../dist/esm/core/election/holder-checks.js';
import { ObservedRecord } from '../../../dist/esm/core/election/observed-record.js';
import { ManualClock, MemoryLock, RecordingLogger } from 'nest-leader/testing';

const LEASE_DURATION_MS = 15_000;
const NOT_HANDED: HolderCheckContext = {
  handedToUs: false,
  ownTransitions: undefined,
  renewedSinceLastRead: false,
};

function checks() {
  const clock = new ManualClock();
  const logger = new RecordingLogger();
  const observed = new ObservedRecord(clock, LEASE_DURATION_MS);
  const lock = new MemoryLock({ name: 'test' });
  const holders = new HolderChecks(
    { identity: 'a', lock, logger, clock, coordinated: undefined },
    observed,
  );
  /** Observes the record as the elector does before asking, then asks. */
  const mustWaitFor = (
    record: LeaseRecord,
    context: Partial<HolderCheckContext> = {},
    holderLiveness?: HolderLiveness,
  ): boolean => {
    const current = { record, version: '1', holderLiveness };
    observed.observe(current);
    return holders.mustWaitFor(current, { ...NOT_HANDED, ...context });
  };
  return { clock, logger, holders, mustWaitFor };
}

const held = (holderIdentity: string, leaseTransitions = 3): LeaseRecord => ({
  holderIdentity,
  leaseDurationSeconds: 15,
  leaseTransitions,
});

describe('HolderChecks', () => {
  test('a free Lease is never waited for', () => {
    const { mustWaitFor } = checks();

    assert.equal(mustWaitFor(held('')), false);
  });

  test("another's Lease is waited for until it expires by our observation", async () => {
    const { clock, mustWaitFor } = checks();
    assert.equal(mustWaitFor(held('x')), true);

    await clock.advance(LEASE_DURATION_MS);

    assert.equal(mustWaitFor(held('x')), false);
  });

  test("a Lease naming us is ours only at our own last write's transitions", () => {
    const { mustWaitFor } = checks();

    assert.equal(mustWaitFor(held('a', 3), { ownTransitions: 3 }), false);
    assert.equal(mustWaitFor(held('a', 4), { ownTransitions: 3 }), true);
    assert.equal(mustWaitFor(held('a', 4)), true, 'never written by this process');
  });

  test('a Lease handed to us is not waited for, whatever its transitions', () => {
    const { mustWaitFor } = checks();

    assert.equal(mustWaitFor(held('a', 9), { handedToUs: true }), false);
  });

  test('a Lease naming us that keeps changing: one namesake warning, and our own record is kept off until a term begins', () => {
    const { logger, holders, mustWaitFor } = checks();

    assert.equal(mustWaitFor(held('a', 4), { renewedSinceLastRead: true }), true);
    assert.equal(mustWaitFor(held('a', 4), { renewedSinceLastRead: true }), true);
    assert.equal(mustWaitFor(held('a', 3), { ownTransitions: 3 }), true, 'namesake suspected');
    assert.equal(logger.matching('warn', /identity "a" but was not written by it/).length, 1);

    holders.termBegan();

    assert.equal(mustWaitFor(held('a', 3), { ownTransitions: 3 }), false);
  });

  test('an unchanged Lease naming us (a restarted process) is waited for without a warning', () => {
    const { logger, mustWaitFor } = checks();

    assert.equal(mustWaitFor(held('a', 4)), true);
    assert.deepEqual(logger.lines, []);
  });

  test('a shared identity detected while leading: warned, and our own record kept off until a term begins', () => {
    const { logger, holders, mustWaitFor } = checks();

    holders.sharedIdentityDetected();

    assert.equal(
      logger.matching('warn', /renewed by another process using the same identity "a"/).length,
      1,
    );
    assert.equal(mustWaitFor(held('a', 3), { ownTransitions: 3 }), true);
    holders.termBegan();
    assert.equal(mustWaitFor(held('a', 3), { ownTransitions: 3 }), false);
  });

  test('a holder proven gone is not waited for, and the proof is logged', () => {
    const { logger, mustWaitFor } = checks();

    const wait = mustWaitFor(held('x'), {}, { state: 'gone', proof: 'PID 123 no longer exists' });

    assert.equal(wait, false);
    assert.equal(logger.matching('info', /"x", is gone \(PID 123 no longer exists\)/).length, 1);
  });

  test('a holder known alive is waited for, silently', () => {
    const { logger, mustWaitFor } = checks();

    assert.equal(mustWaitFor(held('x'), {}, { state: 'alive' }), true);
    assert.deepEqual(logger.lines, []);
  });

  test('a holder that cannot be checked is waited for, said once per holder and term with until when', async () => {
    const { clock, logger, mustWaitFor } = checks();
    const unknown: HolderLiveness = { state: 'unknown', reason: 'on another host (b)' };
    const until = new Date(clock.wallNow().getTime() + LEASE_DURATION_MS).toISOString();

    assert.equal(mustWaitFor(held('x', 3), {}, unknown), true);
    await clock.advance(1_000);
    assert.equal(mustWaitFor(held('x', 3), {}, unknown), true);
    mustWaitFor(held('x', 4), {}, unknown);

    const lines = logger.matching('info', /Waiting for "x"/);
    assert.equal(lines.length, 2);
    assert.match(lines[0]!, new RegExp(`on another host \\(b\\).*${until}`));
  });
});
