import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { candidate, s, world } from './elector.fixture.js';

describe('LeaderElector: the schedule ledger travels with the election record', () => {
  test('every write of the leader carries the text its scheduleLedger writer returns', async () => {
    const w = world();
    let completed = 0;
    const calls: { stored: string | undefined; leaseTransitions: number }[] = [];
    const { elector } = candidate('a', w, {
      scheduleLedger: (stored, leaseTransitions) => {
        calls.push({ stored, leaseTransitions });
        return `ledger ${completed}`;
      },
    });
    elector.start();
    await w.clock.advance(s(1));
    completed = 1;
    await w.clock.advance(s(4)); // renewals every retryPeriod (2 s)

    assert.equal(w.lock.read()!.record.scheduleLedger, 'ledger 1');
    assert.deepEqual(calls[0], { stored: undefined, leaseTransitions: 0 });
    assert.ok(calls.length >= 3, `acquisition and renewals: ${calls.length} calls`);
    assert.ok(calls.slice(1).every((c) => c.stored !== undefined));
    await elector.stop();
    assert.equal(w.lock.read()!.record.holderIdentity, '');
    assert.equal(w.lock.read()!.record.scheduleLedger, 'ledger 1', 'kept on release');
  });

  test("a new leader's writer is given the ledger its predecessor left, with its own term's leaseTransitions", async () => {
    const w = world();
    const a = candidate('a', w, { scheduleLedger: () => 'left by a' });
    a.elector.start();
    await w.clock.advance(s(1));
    await a.elector.stop();
    const seen: { stored: string | undefined; leaseTransitions: number }[] = [];
    const b = candidate('b', w, {
      scheduleLedger: (stored, leaseTransitions) => {
        seen.push({ stored, leaseTransitions });
        return undefined; // keep what is stored
      },
    });

    b.elector.start();
    await w.clock.advance(s(3));

    assert.equal(b.elector.isLeader(), true);
    assert.deepEqual(seen[0], { stored: 'left by a', leaseTransitions: 1 });
    assert.equal(w.lock.read()!.record.scheduleLedger, 'left by a');
    await b.elector.stop();
  });

  test('a follower that recreates a deleted Lease carries the ledger it last saw, merged by its writer', async () => {
    const w = world();
    w.lock.set({
      holderIdentity: 'x',
      leaseDurationSeconds: 15,
      leaseTransitions: 7,
      scheduleLedger: 'left by x',
    });
    const seen: (string | undefined)[] = [];
    const { elector } = candidate('b', w, {
      scheduleLedger: (stored) => {
        seen.push(stored);
        return `${stored ?? 'nothing'} + b`;
      },
    });
    elector.start();
    await w.clock.advance(0); // b reads x's record as a follower: its writer is not called
    assert.deepEqual(seen, []);
    w.lock.delete();

    await w.clock.advance(s(18)); // leaseDuration after it found the Lease missing

    assert.equal(elector.isLeader(), true);
    assert.equal(w.lock.read()!.record.leaseTransitions, 8);
    assert.equal(seen[0], 'left by x', "the writer is given the deleted Lease's ledger");
    assert.equal(w.lock.read()!.record.scheduleLedger, 'left by x + b');
    await elector.stop();
  });

  test('without a writer the stored ledger is kept through acquisition and renewals', async () => {
    const w = world();
    await w.lock.create({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      leaseTransitions: 3,
      scheduleLedger: 'stored',
    });
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(s(5));
    assert.equal(elector.isLeader(), true);
    assert.equal(w.lock.read()!.record.scheduleLedger, 'stored');
    await elector.stop();
  });

  test('a writer that throws is logged and the stored ledger kept; the election goes on', async () => {
    const w = world();
    const { elector, logger } = candidate('a', w, {
      scheduleLedger: () => {
        throw new Error('ledger boom');
      },
    });
    elector.start();
    await w.clock.advance(s(5));
    assert.equal(elector.isLeader(), true);
    assert.ok(logger.matching('warn', 'ledger boom').length >= 1);
    assert.equal(w.lock.read()!.record.scheduleLedger, undefined);
    await elector.stop();
  });

  test('rejects a scheduleLedger that is not a function', () => {
    assert.throws(
      () => candidate('a', world(), { scheduleLedger: 'yes' as never }),
      /scheduleLedger/,
    );
  });
});
