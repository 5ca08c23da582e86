import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  InvalidLeaderElectionOptionError,
  LockConflictError,
  LeaderTermEndedError,
  LeadershipTransferError,
} from 'nest-leader';
import type { LeaderElector } from 'nest-leader/core';
import { ManualClock } from 'nest-leader/testing';
import { candidate, s, world } from './elector.fixture.js';
import { WatchHub } from './watchable-memory-lock.fixture.js';

type World = ReturnType<typeof world>;

/** `a` starts first and leads; the others start 1 s later and have seen the Lease held by `a`. */
async function election(w: World, others: string[]) {
  const a = candidate('a', w);
  a.elector.start();
  await w.clock.advance(0);
  const followers = others.map((id) => candidate(id, w));
  for (const f of followers) f.elector.start();
  await w.clock.advance(s(1));
  return { a, followers };
}

/** Starts a transfer and lets its drain and writes run (they need no time on the clock). */
async function transfer(
  w: World,
  from: LeaderElector,
  to: string,
  options?: { leaseDurationSeconds?: number },
): Promise<void> {
  const done = from.transferLeadership(to, options);
  await w.clock.advance(0);
  await done;
}

async function stopAll(...electors: LeaderElector[]): Promise<void> {
  await Promise.all(electors.map((e) => e.stop()));
}

describe('LeaderElector: transferring leadership to a chosen candidate', () => {
  test('the handoff names the target with transitions + 1, a marker, and the bound as leaseDuration', async () => {
    const w = world();
    const { a, followers } = await election(w, ['b']);

    await transfer(w, a.elector, 'b', { leaseDurationSeconds: 7 });

    const { record } = w.lock.read()!;
    assert.equal(record.holderIdentity, 'b');
    assert.equal(record.leaseTransitions, 1);
    assert.equal(record.leaseDurationSeconds, 7);
    assert.deepEqual(record.handoff, { to: 'b', leaseTransitions: 1 });
    assert.deepEqual(record.acquireTime, w.clock.wallNow());
    assert.deepEqual(record.renewTime, w.clock.wallNow());
    assert.equal(a.elector.isLeader(), false);
    await stopAll(a.elector, ...followers.map((f) => f.elector));
  });

  test('the leader ends its term (reason handed-off) and drains before the handoff is written', async () => {
    const w = world();
    let finishDrain!: () => void;
    const drained = new Promise<void>((resolve) => (finishDrain = resolve));
    const seen: string[] = [];
    const a = candidate('a', w, {
      callbacks: {
        onStoppedLeading: async (term) => {
          const reason = (term.signal.reason as LeaderTermEndedError).reason;
          seen.push(`drain starts: ${reason}, holder ${w.lock.read()!.record.holderIdentity}`);
          await drained;
        },
      },
    });
    a.elector.start();
    await w.clock.advance(0);

    const done = a.elector.transferLeadership('b');
    await w.clock.advance(s(20)); // a drain longer than leaseDuration: the Lease stays renewed
    const during = w.lock.read()!.record;
    assert.equal(during.holderIdentity, 'a');
    assert.ok(w.clock.wallNow().getTime() - during.renewTime!.getTime() <= s(2), 'still renewed');

    finishDrain();
    await w.clock.advance(0);
    await done;
    assert.deepEqual(seen, ['drain starts: handed-off, holder a']);
    assert.equal(w.lock.read()!.record.holderIdentity, 'b');
    await a.elector.stop();
  });

  test('the target takes the Lease at its next read, without waiting out leaseDuration', async () => {
    const w = world();
    const { a, followers } = await election(w, ['b']);
    const [b] = followers;

    await transfer(w, a.elector, 'b');
    await w.clock.advance(s(2)); // one retry period; the handoff reserves it for 15 s

    assert.equal(b!.elector.isLeader(), true);
    const { record } = w.lock.read()!;
    assert.equal(record.holderIdentity, 'b');
    assert.equal(
      record.leaseTransitions,
      1,
      "one handover, one transition: the target keeps the handoff's",
    );
    assert.equal(record.leaseDurationSeconds, 15);
    assert.equal(record.handoff, undefined, 'the marker is removed');
    assert.deepEqual(b!.log.events, ['started 1']);
    assert.deepEqual(a.log.events, ['started 0', 'stopped 0']);
    await stopAll(a.elector, b!.elector);
  });

  test('a target that watches the Lease takes it the moment the handoff arrives', async () => {
    const hub = new WatchHub();
    const clock = new ManualClock();
    const a = candidate('a', { lock: hub.store, clock }, { lock: hub.view() });
    const b = candidate('b', { lock: hub.store, clock }, { lock: hub.view() });
    a.elector.start();
    await clock.advance(0);
    b.elector.start();
    await clock.advance(s(1.5)); // b read once, is watching, next poll not due before expiry

    const handedOffAtMs = clock.nowMs();
    const done = a.elector.transferLeadership('b');
    await clock.advance(0);
    await done;
    await clock.advance(0);

    assert.equal(b.elector.isLeader(), true);
    assert.equal(clock.nowMs(), handedOffAtMs);
    assert.equal(hub.store.read()!.record.leaseTransitions, 1);
    await stopAll(a.elector, b.elector);
  });

  test('other candidates, the old leader included, wait while the handoff is pending', async () => {
    const w = world();
    const { a, followers } = await election(w, ['c']); // the target "b" never runs
    const [c] = followers;

    await transfer(w, a.elector, 'b');
    await w.clock.advance(s(15) - 1);

    assert.equal(a.elector.isLeader(), false);
    assert.equal(c!.elector.isLeader(), false);
    assert.equal(w.lock.read()!.record.holderIdentity, 'b');
    assert.equal(a.elector.leader, 'b');
    assert.equal(c!.elector.leader, 'b');
    await stopAll(a.elector, c!.elector);
  });

  test('a target that never takes it: after the bound another candidate does, with a new term', async () => {
    const w = world();
    const { a, followers } = await election(w, ['c']);
    const [c] = followers;
    await a.elector.stop(); // only c campaigns now
    // a released on stop; let c take it, then hand it to a target that is not running
    await w.clock.advance(s(2));
    assert.equal(c!.elector.isLeader(), true);
    const a2 = candidate('a2', w);
    a2.elector.start();
    await w.clock.advance(s(1));

    await transfer(w, c!.elector, 'b', { leaseDurationSeconds: 5 });
    await w.clock.advance(s(5) - 1);
    assert.equal(a2.elector.isLeader() || c!.elector.isLeader(), false, 'nobody within the bound');

    await w.clock.advance(s(2));
    const leaders = [a2, c!].filter((x) => x.elector.isLeader());
    assert.equal(leaders.length, 1);
    const { record } = w.lock.read()!;
    assert.equal(record.holderIdentity, leaders[0]!.elector.identity);
    assert.equal(record.leaseTransitions, 3);
    assert.equal(record.handoff, undefined);
    await stopAll(a2.elector, c!.elector);
  });

  test('leaseTransitions strictly increase over handoffs back and forth', async () => {
    const w = world();
    const { a, followers } = await election(w, ['b']);
    const b = followers[0]!;

    await transfer(w, a.elector, 'b');
    await w.clock.advance(s(2));
    assert.equal(b.elector.isLeader(), true);
    await transfer(w, b.elector, 'a');
    await w.clock.advance(s(2));
    assert.equal(a.elector.isLeader(), true);

    const terms = [...a.log.terms, ...b.log.terms]
      .map((t) => t.leaseTransitions)
      .sort((x, y) => x - y);
    assert.deepEqual(terms, [0, 1, 2]);
    const written = w.lock.writes.map((x) => x.record.leaseTransitions);
    for (let i = 1; i < written.length; i++) {
      assert.ok(written[i]! >= written[i - 1]!, `transitions went back: ${written.join(', ')}`);
    }
    await stopAll(a.elector, b.elector);
  });

  test('a stale marker (left on a later record) does not let the named candidate take it early', async () => {
    const w = world();
    w.lock.set({
      holderIdentity: 'b',
      leaseDurationSeconds: 15,
      leaseTransitions: 5,
      handoff: { to: 'b', leaseTransitions: 4 },
    });
    const b = candidate('b', w);

    b.elector.start();
    await w.clock.advance(s(15) - 1);
    assert.equal(b.elector.isLeader(), false);

    await w.clock.advance(s(2));
    assert.equal(b.elector.isLeader(), true);
    assert.equal(w.lock.read()!.record.leaseTransitions, 6);
    await b.elector.stop();
  });

  test('a candidate that is not leading cannot transfer: LeadershipTransferError not-leader', async () => {
    const w = world();
    const { a, followers } = await election(w, ['b']);
    const b = followers[0]!;

    assert.throws(
      () => b.elector.transferLeadership('a'),
      (error: unknown) =>
        error instanceof LeadershipTransferError &&
        error.reason === 'not-leader' &&
        error.to === 'a',
    );
    assert.equal(w.lock.read()!.record.holderIdentity, 'a');
    assert.equal(a.elector.isLeader(), true);
    await stopAll(a.elector, b.elector);
  });

  test('a second transfer while one is under way is refused', async () => {
    const w = world();
    const { a, followers } = await election(w, ['b', 'c']);

    const first = a.elector.transferLeadership('b');
    assert.throws(
      () => a.elector.transferLeadership('c'),
      (error: unknown) => error instanceof LeadershipTransferError && error.reason === 'not-leader',
    );
    await w.clock.advance(0);
    await first;
    assert.equal(w.lock.read()!.record.holderIdentity, 'b');
    await stopAll(a.elector, ...followers.map((f) => f.elector));
  });

  test('rejects an empty target, itself, and a bound that is not a whole number of seconds', async () => {
    const w = world();
    const { a } = await election(w, []);

    for (const [to, options] of [
      ['', {}],
      ['a', {}],
      ['b', { leaseDurationSeconds: 0 }],
      ['b', { leaseDurationSeconds: 1.5 }],
    ] as const) {
      assert.throws(
        () => a.elector.transferLeadership(to, options),
        InvalidLeaderElectionOptionError,
        `${JSON.stringify(to)} ${JSON.stringify(options)}`,
      );
    }
    assert.equal(a.elector.isLeader(), true);
    await a.elector.stop();
  });

  test("caps the bound at the election's leaseDuration: 2147483647 s to a ghost is refused, the term goes on", async () => {
    const w = world();
    const { a } = await election(w, []);
    const record = w.lock.read()!.record;

    for (const leaseDurationSeconds of [record.leaseDurationSeconds + 1, 2147483647]) {
      assert.throws(
        () => a.elector.transferLeadership('ghost', { leaseDurationSeconds }),
        (error: unknown) =>
          error instanceof InvalidLeaderElectionOptionError &&
          error.option === 'leaseDurationSeconds' &&
          error.message.includes(
            `at most the election's leaseDurationSeconds (${record.leaseDurationSeconds})`,
          ),
      );
    }
    assert.equal(a.elector.isLeader(), true);
    assert.equal(w.lock.read()!.record.holderIdentity, 'a', 'nothing was written');

    await transfer(w, a.elector, 'b', { leaseDurationSeconds: record.leaseDurationSeconds });
    assert.equal(w.lock.read()!.record.leaseDurationSeconds, record.leaseDurationSeconds);
    await a.elector.stop();
  });

  test('when the Lease was taken during the drain, nothing is handed over: lease-lost', async () => {
    const w = world();
    let finishDrain!: () => void;
    const drained = new Promise<void>((resolve) => (finishDrain = resolve));
    const a = candidate('a', w, { callbacks: { onStoppedLeading: () => drained } });
    a.elector.start();
    await w.clock.advance(0);

    const done = a.elector.transferLeadership('b');
    const outcome = done.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 9 });
    await w.clock.advance(s(2)); // a's renewal finds x holding it
    finishDrain();
    await w.clock.advance(0);

    const error = await outcome;
    assert.ok(error instanceof LeadershipTransferError, String(error));
    assert.equal(error.reason, 'lease-lost');
    assert.equal(w.lock.read()!.record.holderIdentity, 'x');
    await a.elector.stop();
  });

  test('the old leader does not campaign again before its handoff write is answered; a failed write leaves it the Lease', async () => {
    const w = world();
    const a = candidate('a', w);
    a.elector.start();
    await w.clock.advance(0);
    w.lock.hangNext('update'); // the handoff write: no answer until the request times out (5 s)

    const outcome = a.elector.transferLeadership('b').then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await w.clock.advance(s(5) - 1);
    assert.equal(a.elector.isLeader(), false, 'no new term while the handoff may still land');
    assert.deepEqual(a.log.events, ['started 0', 'stopped 0']);

    await w.clock.advance(s(3));
    const error = await outcome;
    assert.ok(error instanceof LeadershipTransferError, String(error));
    assert.equal(error.reason, 'write-failed');
    assert.equal(a.elector.isLeader(), true, 'the Lease still named a: it takes it again');
    assert.deepEqual(a.log.events, ['started 0', 'stopped 0', 'started 1']);
    await a.elector.stop();
  });

  test('a write that lands between the handoff read and its write (a late renewal) is re-read, then handed over', async () => {
    const w = world();
    const { a, followers } = await election(w, ['b']);
    w.lock.failNext('update', new LockConflictError(w.lock.description, 'update'));

    await transfer(w, a.elector, 'b');

    const { record } = w.lock.read()!;
    assert.equal(record.holderIdentity, 'b');
    assert.deepEqual(record.handoff, { to: 'b', leaseTransitions: 1 });
    await stopAll(a.elector, ...followers.map((f) => f.elector));
  });

  test("with onLost: 'stop' the old leader still campaigns after handing off", async () => {
    const w = world();
    const a = candidate('a', w, { onLost: 'stop' });
    a.elector.start();
    await w.clock.advance(0);

    await transfer(w, a.elector, 'b', { leaseDurationSeconds: 3 });
    await w.clock.advance(s(5)); // b never came: a takes it back after the bound

    assert.equal(a.elector.isLeader(), true);
    assert.equal(w.lock.read()!.record.leaseTransitions, 2);
    await a.elector.stop();
  });
});
