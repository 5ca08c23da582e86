import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LeaseRecord } from 'nest-leader/core';
import { candidate, s, world } from './elector.fixture.js';

const HOUR_MS = 3_600_000;

/** Starts `a` against `record` and returns when it took over (in ms), checking every 0.1 s. */
async function takeoverTimeMs(record: LeaseRecord): Promise<number> {
  const w = world();
  w.lock.set(record);
  const { elector } = candidate('a', w);
  elector.start();
  for (let t = 0; t <= s(60); t += 100) {
    await w.clock.advance(t === 0 ? 0 : 100);
    if (elector.isLeader()) {
      await elector.stop();
      return t;
    }
  }
  await elector.stop();
  return Infinity;
}

const base: LeaseRecord = { holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 0 };
const start = new Date('2026-01-01T00:00:00Z').getTime();

describe('LeaderElector: foreign and malformed records, clock skew', () => {
  test('a well-formed Lease held by another is taken over after leaseDuration (baseline)', async () => {
    assert.equal(await takeoverTimeMs(base), s(15.1));
  });

  test('a renewTime an hour in the past does not make the Lease look expired', async () => {
    const renewTime = new Date(start - HOUR_MS);
    assert.equal(await takeoverTimeMs({ ...base, renewTime, acquireTime: renewTime }), s(15.1));
  });

  test('a renewTime an hour in the future does not delay the takeover', async () => {
    const renewTime = new Date(start + HOUR_MS);
    assert.equal(await takeoverTimeMs({ ...base, renewTime }), s(15.1));
  });

  test('a holder without renewTime or acquireTime is judged by observed time', async () => {
    assert.equal(await takeoverTimeMs({ ...base }), s(15.1));
  });

  for (const leaseDurationSeconds of [0, -5, Number.NaN]) {
    test(`leaseDurationSeconds ${leaseDurationSeconds}: our leaseDuration is used`, async () => {
      assert.equal(await takeoverTimeMs({ ...base, leaseDurationSeconds }), s(15.1));
    });
  }

  test('a record with default fields (a Lease without spec) is free and taken at once', async () => {
    const record = { holderIdentity: '', leaseDurationSeconds: 0, leaseTransitions: 0 };
    assert.equal(await takeoverTimeMs(record), 0);
  });

  test('metadata writes (same record, new version) every 500 ms do not delay a takeover', async () => {
    const w = world();
    w.lock.set(base);
    const { elector } = candidate('a', w);
    elector.start();
    let takeoverMs = Infinity;
    for (let t = 0; t <= s(30) && takeoverMs === Infinity; t += 500) {
      if (w.lock.read()!.record.holderIdentity === 'x') w.lock.set(w.lock.read()!.record);
      await w.clock.advance(500);
      if (elector.isLeader()) takeoverMs = w.clock.nowMs();
    }
    assert.ok(takeoverMs <= s(15) + 500, `took over at ${takeoverMs} ms`);
    await elector.stop();
  });

  test('a change of the election record (renewTime) does delay a takeover', async () => {
    const w = world();
    w.lock.set(base);
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(s(10));
    w.lock.set({ ...base, renewTime: w.clock.wallNow() });
    await w.clock.advance(s(10));
    assert.equal(elector.isLeader(), false);
    await w.clock.advance(s(8));
    assert.equal(elector.isLeader(), true);
    await elector.stop();
  });

  test('leaseTransitions at 2^31 − 1 wraps to 0 on takeover, with a warning', async () => {
    const w = world();
    w.lock.set({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 2 ** 31 - 1 });
    const { elector, log, logger } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    assert.equal(elector.isLeader(), true);
    assert.equal(w.lock.read()!.record.leaseTransitions, 0);
    assert.deepEqual(log.events, ['started 0']);
    assert.equal(logger.matching('warn', 'reached 2147483647').length, 1);
    assert.match(logger.matching('warn', 'reached')[0]!, /Fencing tokens restart/);
    await elector.stop();
  });

  test('a leaseTransitions above the int32 range is treated as the maximum', async () => {
    const w = world();
    w.lock.set({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 2 ** 40 });
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);
    for (const write of w.lock.writes.slice(1)) {
      assert.ok(write.record.leaseTransitions <= 2 ** 31 - 1);
    }
    await elector.stop();
  });

  test('a negative leaseTransitions restarts the count instead of going further negative', async () => {
    const w = world();
    w.lock.set({ holderIdentity: '', leaseDurationSeconds: 0, leaseTransitions: -3 });
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    assert.equal(w.lock.read()!.record.leaseTransitions, 1);
    await elector.stop();
  });

  test('wall-clock jumps change nothing: expiry uses the monotonic clock', async () => {
    const w = world();
    w.lock.set(base);
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(s(2));

    w.clock.setWallTime(new Date(start + 24 * HOUR_MS));
    await w.clock.advance(s(12));
    assert.equal(elector.isLeader(), false);
    w.clock.setWallTime(new Date(start - 24 * HOUR_MS));
    await w.clock.advance(s(2));

    assert.equal(elector.isLeader(), true);
    // Written from the (jumped) wall clock at takeover; never compared with anything.
    const acquiredMs = w.lock.read()!.record.acquireTime!.getTime();
    assert.ok(acquiredMs > start - 24 * HOUR_MS && acquiredMs <= w.clock.wallNow().getTime());
    await elector.stop();
  });

  test('strategy and preferredHolder survive acquiring, renewing and releasing', async () => {
    const w = world();
    // A preferredHolder naming the holder itself asks nothing of it (one naming another
    // candidate is a handoff request: leader-elector.coordinated.test.ts).
    w.lock.set({
      ...base,
      holderIdentity: '',
      strategy: 'OldestEmulationVersion',
      preferredHolder: 'a',
    });
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(s(4));
    await elector.stop();

    for (const write of w.lock.writes) {
      assert.equal(write.record.strategy, 'OldestEmulationVersion');
      assert.equal(write.record.preferredHolder, 'a');
    }
    assert.deepEqual(
      w.lock.writes.map((write) => write.record.holderIdentity),
      ['', 'a', 'a', 'a', ''],
    );
  });
});
