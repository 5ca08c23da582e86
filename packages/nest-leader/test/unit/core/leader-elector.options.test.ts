import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidLeaderElectionOptionError } from 'nest-leader';
import {
  LeaderElector,
  type LeaderElectorOptions,
  validateLeaderElectionTimings,
} from 'nest-leader/core';
import { inspect } from 'node:util';
import { ManualClock, MemoryLock } from 'nest-leader/testing';

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

  test('retryPeriodSeconds 9 (default renewDeadline 10) names retryPeriodSeconds, clean numbers', () => {
    assert.throws(
      () => new LeaderElector({ lock: new MemoryLock(), identity: 'a', retryPeriodSeconds: 9 }),
      (error: unknown) => {
        assert.ok(error instanceof InvalidLeaderElectionOptionError);
        assert.equal(error.option, 'retryPeriodSeconds');
        assert.equal(
          error.message,
          'Invalid leader election option "retryPeriodSeconds": must be less than ' +
            'renewDeadlineSeconds (10) / 1.2 = 8.3333, so the leader can retry a renewal (got 9).',
        );
        assert.doesNotMatch(error.message, /99999/);
        return true;
      },
    );
  });

  test('leaseDurationSeconds alone below the default renewDeadline names leaseDurationSeconds', () => {
    rejects(
      { leaseDurationSeconds: 5 },
      'leaseDurationSeconds',
      /greater than renewDeadlineSeconds \(10\)/,
    );
  });

  test('rejects retryPeriodSeconds below 0.1 s (≈ 70 requests/s at 1e-6)', () => {
    rejects(
      { leaseDurationSeconds: 2, renewDeadlineSeconds: 1, retryPeriodSeconds: 1e-6 },
      'retryPeriodSeconds',
      /at least 0\.1 seconds/,
    );
    assert.doesNotThrow(
      () =>
        new LeaderElector({
          lock: new MemoryLock(),
          identity: 'a',
          leaseDurationSeconds: 1,
          renewDeadlineSeconds: 0.5,
          retryPeriodSeconds: 0.1,
        }),
    );
  });

  test('rejects an unknown option, naming the closest known one', () => {
    rejects(
      { leaseDuration: 60 } as Partial<LeaderElectorOptions>,
      'leaseDuration',
      /not an option of LeaderElector; did you mean "leaseDurationSeconds"\?/,
    );
    rejects(
      { retryPeriodSecs: 1 } as Partial<LeaderElectorOptions>,
      'retryPeriodSecs',
      /did you mean "retryPeriodSeconds"/,
    );
    rejects(
      { idnetity: 'x' } as Partial<LeaderElectorOptions>,
      'idnetity',
      /did you mean "identity"/,
    );
    rejects({ zzz: 1 } as Partial<LeaderElectorOptions>, 'zzz', /not an option of LeaderElector$/);
  });

  test('option errors never print long strings or objects: a token passed by mistake stays out', () => {
    const token = 'eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.' + 'x'.repeat(200);
    for (const options of [
      { identity: token },
      { leaseDurationSeconds: token as unknown as number },
      { onLost: { token } as unknown as 'stop' },
    ]) {
      assert.throws(
        () => new LeaderElector({ lock: new MemoryLock(), identity: 'a', ...options }),
        (error: unknown) => {
          assert.ok(error instanceof InvalidLeaderElectionOptionError);
          assert.ok(!error.message.includes('eyJ'), error.message);
          assert.ok(!inspect(error).includes('eyJ'), 'util.inspect of the error leaks it');
          assert.ok(!inspect(error, { showHidden: false, depth: 5 }).includes('xxxxxxxx'));
          return true;
        },
      );
    }
    assert.throws(
      () =>
        new LeaderElector({
          lock: new MemoryLock(),
          identity: 'a',
          leaseDurationSeconds: '15' as unknown as number,
        }),
      /\(got "15"\)/,
    );
  });

  for (const identity of ['pod-a\nERROR forged line', 'pod\u0000a', 'pod\u202ea', 'tab\there']) {
    test(`rejects identity ${JSON.stringify(identity)}: control and format characters`, () => {
      rejects({ identity }, 'identity', /must be printable/);
    });
  }

  test('a foreign holder with a newline is logged escaped, on one line', async () => {
    const lock = new MemoryLock();
    lock.set({ holderIdentity: 'x\nERROR forged', leaseDurationSeconds: 15, leaseTransitions: 0 });
    const lines: string[] = [];
    const logger = { debug() {}, info: (m: string) => lines.push(m), warn() {}, error() {} };
    const clock = new ManualClock();
    const elector = new LeaderElector({ lock, identity: 'a', clock, logger });
    elector.start();
    await clock.advance(0);
    assert.ok(
      lines.some((l) => l.includes('"x\\nERROR forged"')),
      lines.join('|'),
    );
    assert.ok(lines.every((l) => !l.includes('\n')));
    await elector.stop();
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

  test('rejects a podCreationTimestamp that is not a valid Date', () => {
    rejects(
      { podCreationTimestamp: 'yesterday' as unknown as Date },
      'podCreationTimestamp',
      /valid Date/,
    );
    rejects({ podCreationTimestamp: new Date(NaN) }, 'podCreationTimestamp', /valid Date/);
  });

  test('podCreationTimestamp is advertised beside the start; one after the start (clock skew) as the start', async () => {
    const clock = new ManualClock();
    const lock = new MemoryLock({ name: 'test' });
    const started = clock.wallNow();
    const early = new LeaderElector({
      lock,
      clock,
      identity: 'early',
      podTemplateHash: 'aaa',
      podCreationTimestamp: new Date(started.getTime() - 60_000),
    });
    const skewed = new LeaderElector({
      lock,
      clock,
      identity: 'skewed',
      podTemplateHash: 'aaa',
      podCreationTimestamp: new Date(started.getTime() + 3_000),
    });
    early.start();
    skewed.start();
    await clock.advance(5_000);
    const byIdentity = new Map(lock.read()!.record.candidates!.map((c) => [c.identity, c]));
    assert.equal(
      byIdentity.get('early')?.podCreationTimestamp?.getTime(),
      started.getTime() - 60_000,
    );
    assert.equal(byIdentity.get('skewed')?.podCreationTimestamp?.getTime(), started.getTime());
    const stopping = Promise.all([early.stop(), skewed.stop()]);
    await clock.advance(20_000);
    await stopping;
  });

  test('construction does not touch the lock', () => {
    const lock = new MemoryLock();
    new LeaderElector({ lock, identity: 'a' });
    assert.deepEqual(lock.calls, { get: 0, create: 0, update: 0 });
  });
});
