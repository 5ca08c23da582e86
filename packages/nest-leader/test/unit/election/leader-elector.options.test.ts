import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  InvalidLeaderElectionOptionError,
  LeaderElector,
  type LeaderElectorOptions,
  validateLeaderElectionTimings,
} from 'nest-leader';
import { MemoryLock } from 'nest-leader/testing';

function rejects(options: Partial<LeaderElectorOptions>, option: string, rule: RegExp): void {
  assert.throws(
    () => new LeaderElector({ lock: new MemoryLock(), identity: 'a', ...options }),
    (error: unknown) => {
      assert.ok(error instanceof InvalidLeaderElectionOptionError);
      assert.equal(error.option, option);
      assert.match(error.rule, rule);
      assert.match(error.message, new RegExp(option));
      return true;
    },
  );
}

describe('LeaderElector options', () => {
  test('defaults are client-go defaults: 15 s, 10 s, 2 s', () => {
    assert.deepEqual(validateLeaderElectionTimings(), {
      leaseDurationSeconds: 15,
      renewDeadlineSeconds: 10,
      retryPeriodSeconds: 2,
    });
  });

  test('accepts leaseDuration > renewDeadline > 1.2 × retryPeriod', () => {
    assert.doesNotThrow(
      () =>
        new LeaderElector({
          lock: new MemoryLock(),
          identity: 'a',
          leaseDurationSeconds: 2,
          renewDeadlineSeconds: 1.5,
          retryPeriodSeconds: 0.5,
        }),
    );
  });

  for (const value of [0, -1, Number.NaN, Infinity, '15' as unknown as number]) {
    test(`rejects leaseDurationSeconds ${String(value)}: not a positive finite number`, () => {
      rejects({ leaseDurationSeconds: value }, 'leaseDurationSeconds', /positive finite/);
    });
  }

  test('rejects a fractional leaseDurationSeconds: the Lease field is an integer', () => {
    rejects({ leaseDurationSeconds: 15.5 }, 'leaseDurationSeconds', /whole number/);
  });

  test('rejects renewDeadlineSeconds >= leaseDurationSeconds', () => {
    rejects(
      { renewDeadlineSeconds: 15 },
      'renewDeadlineSeconds',
      /less than leaseDurationSeconds \(15\)/,
    );
  });

  test('rejects renewDeadlineSeconds <= 1.2 × retryPeriodSeconds', () => {
    rejects(
      { renewDeadlineSeconds: 6, retryPeriodSeconds: 5 },
      'renewDeadlineSeconds',
      /greater than 1\.2 × retryPeriodSeconds \(6\)/,
    );
  });

  test('rejects a non-positive retryPeriodSeconds', () => {
    rejects({ retryPeriodSeconds: 0 }, 'retryPeriodSeconds', /positive finite/);
  });

  for (const identity of ['', 'x'.repeat(129), undefined as unknown as string]) {
    test(`rejects identity ${JSON.stringify(identity)?.slice(0, 12)}: non-empty, at most 128 chars`, () => {
      rejects({ identity }, 'identity', /non-empty string of at most 128/);
    });
  }

  test('accepts an identity of 128 characters', () => {
    assert.doesNotThrow(
      () => new LeaderElector({ lock: new MemoryLock(), identity: 'x'.repeat(128) }),
    );
  });

  test('rejects a missing lock', () => {
    rejects({ lock: undefined as unknown as MemoryLock }, 'lock', /ResourceLock/);
  });

  test("rejects an onLost other than 'recampaign' or 'stop'", () => {
    rejects({ onLost: 'exit' as 'stop' }, 'onLost', /'recampaign' or 'stop'/);
  });

  test('construction does not touch the lock', () => {
    const lock = new MemoryLock();
    new LeaderElector({ lock, identity: 'a' });
    assert.deepEqual(lock.calls, { get: 0, create: 0, update: 0 });
  });
});
