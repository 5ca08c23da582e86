import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LeadershipTransferError, type ResourceLock } from 'nest-leader';
import type {
  AdvertisedCandidate,
  LeaderElector,
  LeaseRecord,
  VersionedLeaseRecord,
} from 'nest-leader/core';
import type { ManualClock, MemoryLock } from 'nest-leader/testing';
import {
  acceptsThenDies,
  candidate,
  oldTemplateOnly,
  s,
  settle,
  world,
} from './elector.fixture.js';

type World = ReturnType<typeof world>;

/** The offer window at the fixture's timings (retryPeriod 2 s): max(1 s, 2 × retryPeriod). */
const WINDOW_MS = s(4);

/**
 * Entries of candidates that were SIGKILLed (no stop path ran): advertised, started before
 * every live one (so preferred first among their template), never answering.
 */
function addGhosts(w: World, ghosts: { identity: string; hash: string }[]): void {
  const { record } = w.lock.read()!;
  const entries: AdvertisedCandidate[] = ghosts.map((g, i) => ({
    identity: g.identity,
    podTemplateHash: g.hash,
    priority: 0,
    startedAt: new Date(Date.UTC(2025, 0, 1, 0, 0, i)),
  }));
  w.lock.set({ ...record, candidates: [...(record.candidates ?? []), ...entries] });
}

function advertised(w: World): string[] {
  return (w.lock.read()!.record.candidates ?? []).map((c) => c.identity).sort();
}

/**
 * Runs the clock in 50 ms steps until `pending` settles, checking at every step that at most one
 * elector leads, and recording when the last term of `from` ended and the first of `to` began.
 */
async function watchHandover(
  w: World,
  pending: Promise<unknown>,
  electors: Record<string, LeaderElector>,
): Promise<{ leadersSeen: Set<string>; leaderlessMs: number }> {
  let settled = false;
  void pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  const leadersSeen = new Set<string>();
  let leaderlessMs = 0;
  for (let i = 0; i < 1200 && !settled; i++) {
    await w.clock.advance(50);
    const leading = Object.entries(electors).filter(([, e]) => e.isLeader());
    assert.ok(leading.length <= 1, `two leaders: ${leading.map(([id]) => id).join(', ')}`);
    if (leading.length === 0) leaderlessMs += 50;
    for (const [id] of leading) leadersSeen.add(id);
  }
  await pending;
  return { leadersSeen, leaderlessMs };
}

describe('LeaderElector: a dead candidate’s advertisement never costs a lease (ghosts)', () => {
  test('one ghost: the stop offers it the Lease, leading on; unanswered within one window it is removed, and the live peer gets it', async () => {
    const w = world();
    const { leader, oldPeer: peer } = await oldTemplateOnly(w);
    addGhosts(w, [{ identity: 'ghost-1', hash: 'aaa' }]); // preferred: it started earliest

    const startedMs = w.clock.nowMs();
    const stop = leader.elector.stop();
    const offerAtMs = startedMs + s(5); // the plain stop's settle: half of renewDeadline
    await w.clock.advance(offerAtMs - w.clock.nowMs() + 100);
    assert.equal(w.lock.read()!.record.handoffOffer?.to, 'ghost-1', 'the ghost is offered first');
    const { leaderlessMs } = await watchHandover(w, settle(w, stop), {
      'old-1': leader.elector,
      'old-2': peer.elector,
    });
    await w.clock.advance(s(0.5));

    assert.equal(peer.elector.isLeader(), true, 'the live peer leads');
    assert.equal(w.lock.read()!.record.leaseTransitions, 1, 'one handover, one transition');
    assert.deepEqual(advertised(w), ['old-2'], 'the ghost (and the stopped leader) are gone');
    assert.ok(leaderlessMs <= 500, `leaderless for ${leaderlessMs} ms, not a lease`);
    const stopTookMs = w.clock.nowMs() - startedMs;
    assert.ok(
      stopTookMs <= s(5) + WINDOW_MS + s(2) + s(1),
      `settle + one window + the peer's acceptance: ${stopTookMs} ms`,
    );
    assert.match(leader.logger.messages().join('\n'), /"ghost-1" did not accept the handoff/);
    await settle(w, peer.elector.stop());
  });

  test('a crash-looping pod: the offer its crashed container’s settled advertisement drew is refused by the next container of the same pod (same identity, new start)', async () => {
    const w = world();
    const { leader, oldPeer: peer } = await oldTemplateOnly(w);
    // The pod's first container advertised, then crashed (no stop path ran); it started first,
    // so its entry is the one the stopping leader prefers.
    addGhosts(w, [{ identity: 'crashloop-0', hash: 'aaa' }]);
    const firstStart = w.lock.read()!.record.candidates!.at(-1)!.startedAt;

    const stop = leader.elector.stop();
    await w.clock.advance(s(5) + 100); // the plain stop's settle, then the offer
    const offer = w.lock.read()!.record.handoffOffer;
    assert.equal(offer?.to, 'crashloop-0', 'the crashed container’s entry drew the offer');
    assert.equal(offer?.toStartedAt?.getTime(), firstStart.getTime(), 'naming its start');

    // The kubelet restarts the container: the same pod name, so the same identity.
    const restarted = candidate('crashloop-0', w, { podTemplateHash: 'aaa' });
    restarted.elector.start();
    const { leadersSeen } = await watchHandover(w, settle(w, stop), {
      'old-1': leader.elector,
      'old-2': peer.elector,
      'crashloop-0': restarted.elector,
    });
    await w.clock.advance(s(0.5));

    const acceptances = w.lock.writes.filter(
      (x) => x.record.handoffOffer?.accepted && x.record.handoffOffer.to === 'crashloop-0',
    );
    assert.equal(acceptances.length, 0, 'the restarted container never accepted');
    assert.equal(restarted.elector.isLeader(), false);
    assert.equal(peer.elector.isLeader(), true, 'the live peer was offered next and leads');
    assert.deepEqual([...leadersSeen].sort(), ['old-1', 'old-2']);
    assert.equal(w.lock.read()!.record.leaseTransitions, 1, 'one handover, one transition');
    assert.match(
      restarted.logger.messages().join('\n'),
      /"crashloop-0" ignores the handoff offer .* names the incarnation started 2025-01-01T00:00:00\.000Z/,
    );
    await settle(w, Promise.all([peer.elector.stop(), restarted.elector.stop()]));
  });

  test('three ghosts: each costs at most one offer window of shutdown time, the leader leads meanwhile, then the live peer gets it', async () => {
    const w = world();
    const { leader, oldPeer: peer } = await oldTemplateOnly(w);
    addGhosts(w, [
      { identity: 'ghost-1', hash: 'aaa' },
      { identity: 'ghost-2', hash: 'aaa' },
      { identity: 'ghost-3', hash: 'aaa' },
    ]);

    const offered: { to: string; atMs: number }[] = [];
    const startedMs = w.clock.nowMs();
    const stop = settle(w, leader.elector.stop());
    let endedMs: number | undefined;
    void stop.then(() => (endedMs = w.clock.nowMs()));
    for (let i = 0; i < 800 && endedMs === undefined; i++) {
      await w.clock.advance(50);
      const to = w.lock.read()!.record.handoffOffer?.to;
      if (to !== undefined && offered.at(-1)?.to !== to)
        offered.push({ to, atMs: w.clock.nowMs() });
      if (to?.startsWith('ghost')) {
        assert.equal(leader.elector.isLeader(), true, 'leads throughout the offers to ghosts');
      }
    }
    await stop;
    await w.clock.advance(s(0.5));

    assert.deepEqual(
      offered.map((o) => o.to),
      ['ghost-1', 'ghost-2', 'ghost-3', 'old-2'],
    );
    for (let i = 1; i < offered.length; i++) {
      const spentMs = offered[i]!.atMs - offered[i - 1]!.atMs;
      assert.ok(spentMs <= WINDOW_MS + 200, `${offered[i - 1]!.to} cost ${spentMs} ms`);
    }
    assert.equal(peer.elector.isLeader(), true);
    assert.deepEqual(advertised(w), ['old-2']);
    assert.ok(endedMs! - startedMs <= s(5) + 3 * WINDOW_MS + s(3));
    await settle(w, peer.elector.stop());
  });

  test('a rollout whose new pod died after it advertised: the stopping leader offers it, removes it, waits on for the next new pod and hands to it', async () => {
    const w = world();
    const leader = candidate('old-1', w, { podTemplateHash: 'aaa', newerTemplateWaitSeconds: 20 });
    leader.elector.start();
    await w.clock.advance(s(1));
    addGhosts(w, [{ identity: 'new-ghost', hash: 'bbb' }]); // advertised, then killed booting
    // The ghost's entry started before the rollout: give it a start after the leader's.
    const { record } = w.lock.read()!;
    w.lock.set({
      ...record,
      candidates: record.candidates!.map((c) =>
        c.identity === 'new-ghost' ? { ...c, startedAt: w.clock.wallNow() } : c,
      ),
    });

    const stop = leader.elector.stop();
    await w.clock.advance(s(1));
    assert.equal(w.lock.read()!.record.handoffOffer?.to, 'new-ghost');
    await w.clock.advance(WINDOW_MS + s(1));
    assert.equal(leader.elector.isLeader(), true, 'leads on, waiting for a newer template');
    assert.equal(advertised(w).includes('new-ghost'), false, 'the ghost was removed');

    const newPod = candidate('new-2', w, { podTemplateHash: 'bbb' });
    newPod.elector.start();
    const { leaderlessMs } = await watchHandover(w, settle(w, stop), {
      'old-1': leader.elector,
      'new-2': newPod.elector,
    });
    await w.clock.advance(s(0.5));

    assert.equal(newPod.elector.isLeader(), true);
    assert.deepEqual(newPod.log.events, ['started 1'], 'one handover, one transition');
    assert.ok(leaderlessMs <= 500, `leaderless for ${leaderlessMs} ms`);
    await settle(w, newPod.elector.stop());
  });

  test('transferLeadership(to) to a candidate that is gone: LeadershipTransferError not-accepted after one window, the term goes on', async () => {
    const w = world();
    const { leader, oldPeer: peer } = await oldTemplateOnly(w);
    addGhosts(w, [{ identity: 'ghost-1', hash: 'aaa' }]);
    const startedMs = w.clock.nowMs();

    const error = await settle(w, leader.elector.transferLeadership('ghost-1')).catch(
      (e: unknown) => e,
    );

    assert.ok(error instanceof LeadershipTransferError, String(error));
    assert.equal(error.reason, 'not-accepted');
    assert.equal(error.to, 'ghost-1');
    assert.match(error.message, /did not|accepted the handoff offer in time/);
    assert.ok(w.clock.nowMs() - startedMs <= WINDOW_MS + 500);
    assert.equal(leader.elector.isLeader(), true);
    assert.equal(leader.log.events.length, 1, 'the term never ended');
    assert.deepEqual(advertised(w), ['old-1', 'old-2']);
    await settle(w, Promise.all([leader.elector.stop(), peer.elector.stop()]));
  });

  test('a live candidate that accepts late (after the window): the leader has moved on to the next, no double leadership, and the late one advertises itself again', async () => {
    const w = world();
    const leader = candidate('a', w, { podTemplateHash: 'h' });
    leader.elector.start();
    await w.clock.advance(s(1));
    // b started first (preferred), but its writes come to take 5 s: its acceptance arrives late.
    const lateLock = new LateWrites(w.lock, w.clock);
    const late = candidate('b', w, { podTemplateHash: 'h', lock: lateLock });
    late.elector.start();
    await w.clock.advance(s(8));
    const prompt = candidate('c', w, { podTemplateHash: 'h' });
    prompt.elector.start();
    await w.clock.advance(s(1));
    assert.deepEqual(advertised(w), ['a', 'b', 'c']);
    lateLock.delayMs = s(5);

    const { leadersSeen } = await watchHandover(w, settle(w, leader.elector.transferLeadership()), {
      a: leader.elector,
      b: late.elector,
      c: prompt.elector,
    });
    await w.clock.advance(s(6)); // b's late acceptance lands: a conflict, then no offer to accept
    lateLock.delayMs = 0; // its writes are prompt again: it adds its removed entry back
    await w.clock.advance(s(6));

    assert.equal(prompt.elector.isLeader(), true, 'c, which answered in time, leads');
    assert.equal(late.elector.isLeader(), false);
    assert.equal(leadersSeen.has('b'), false, 'b never led');
    assert.deepEqual(late.log.events, []);
    assert.match(leader.logger.messages().join('\n'), /"b" did not accept the handoff/);
    assert.ok(advertised(w).includes('b'), 'the live candidate added its entry again');
    await settle(
      w,
      Promise.all([leader.elector.stop(), late.elector.stop(), prompt.elector.stop()]),
    );
  });

  test('an offer is only honoured from the current holder at its transitions: a stale one left by a former leader is never accepted', async () => {
    const w = world();
    w.lock.set({
      holderIdentity: 'x',
      leaseDurationSeconds: 15,
      leaseTransitions: 9,
      acquireTime: w.clock.wallNow(),
      renewTime: w.clock.wallNow(),
      // a's offer from its term 8, written back by x (a client-go peer keeps annotations).
      handoffOffer: { to: 'c', from: 'a', leaseTransitions: 8 },
    });
    const c = candidate('c', w, { podTemplateHash: 'h' });
    c.elector.start();
    await w.clock.advance(s(5));
    // The holder's own offer at other transitions: stale too.
    const { record } = w.lock.read()!;
    w.lock.set({ ...record, handoffOffer: { to: 'c', from: 'x', leaseTransitions: 8 } });
    await w.clock.advance(s(5));

    const accepted = w.lock.writes.filter((x) => x.record.handoffOffer?.accepted);
    assert.deepEqual(accepted, [], 'never accepted');
    assert.equal(c.elector.isLeader(), false, 'and x’s live Lease is waited for');
    await c.elector.stop();
  });

  test('two leaders racing: the Lease taken from the offering leader ends its offer (not-leader), and its target ignores the offer left behind', async () => {
    const w = world();
    const a = candidate('a', w, { podTemplateHash: 'h' });
    a.elector.start();
    await w.clock.advance(s(1));
    const slowLock = new LateWrites(w.lock, w.clock);
    const c = candidate('c', w, { podTemplateHash: 'h', lock: slowLock });
    c.elector.start();
    await w.clock.advance(s(1));
    slowLock.delayMs = s(3); // its acceptance lands after the Lease changed hands

    const transfer = a.elector.transferLeadership('c').catch((e: unknown) => e);
    await w.clock.advance(s(0.5));
    assert.equal(w.lock.read()!.record.handoffOffer?.to, 'c');
    // Another leader takes over (a was cut off), keeping the annotations as client-go does.
    const { record } = w.lock.read()!;
    w.lock.set({ ...record, holderIdentity: 'x', leaseTransitions: record.leaseTransitions + 1 });
    const error = await settle(w, transfer);
    await w.clock.advance(s(5));

    assert.ok(error instanceof LeadershipTransferError, String(error));
    assert.equal(error.reason, 'not-leader');
    assert.equal(w.lock.read()!.record.holderIdentity, 'x');
    assert.equal(w.lock.read()!.record.handoffOffer?.accepted, undefined, 'c never accepted');
    assert.equal(a.elector.isLeader() || c.elector.isLeader(), false);
    await settle(w, Promise.all([a.elector.stop(), c.elector.stop()]));
  });

  test('a takeover of an expired Lease removes the expired holder’s advertisement', async () => {
    const w = world();
    w.lock.set({
      holderIdentity: 'crashed',
      leaseDurationSeconds: 15,
      leaseTransitions: 4,
      acquireTime: w.clock.wallNow(),
      renewTime: w.clock.wallNow(),
    });
    addGhosts(w, [{ identity: 'crashed', hash: 'h' }]);
    const b = candidate('b', w, { podTemplateHash: 'h' });
    b.elector.start();
    await w.clock.advance(s(17.5));

    assert.equal(b.elector.isLeader(), true);
    assert.deepEqual(advertised(w), ['b']);
    await settle(w, b.elector.stop());
  });

  test('steady state costs nothing: with ghosts advertised and nobody stopping, the only writes are renewals', async () => {
    const w = world();
    const { leader, oldPeer: peer } = await oldTemplateOnly(w);
    addGhosts(w, [{ identity: 'ghost-1', hash: 'aaa' }]);
    await w.clock.advance(s(4));
    const before = w.lock.writes.length;
    const getsBefore = w.lock.calls.get;

    await w.clock.advance(s(60));

    const writes = w.lock.writes.slice(before - w.lock.writes.length);
    assert.equal(writes.length, 30, 'one renewal per retryPeriod');
    assert.ok(writes.every((x) => x.record.handoffOffer === undefined));
    assert.equal(w.lock.calls.get - getsBefore, 30, 'the follower’s polls only');
    await settle(w, Promise.all([leader.elector.stop(), peer.elector.stop()]));
  });
});

/**
 * Runs the clock in 50 ms steps (at most `limitMs`) until `done()` holds, asserting at every
 * step that at most one of `electors` leads by its own `isLeader()`; resolves the time taken.
 */
async function stepUntil(
  w: World,
  electors: Record<string, LeaderElector>,
  done: () => boolean,
  limitMs = s(40),
): Promise<number> {
  const startedMs = w.clock.nowMs();
  while (!done()) {
    assert.ok(w.clock.nowMs() - startedMs < limitMs, `not done within ${limitMs} ms`);
    await w.clock.advance(50);
    const leading = Object.entries(electors).filter(([, e]) => e.isLeader());
    assert.ok(leading.length <= 1, `two leaders: ${leading.map(([id]) => id).join(', ')}`);
  }
  return w.clock.nowMs() - startedMs;
}

/** True when the record is a handoff to `to` (its marker names it). */
const handedTo = (w: World, to: string) => w.lock.read()!.record.handoff?.to === to;

describe('LeaderElector: a target that accepted and died before taking the Lease costs one offer window', () => {
  test('on stop: the handoff to the accepted target reserves the Lease for an offer window (4 s), not leaseDuration; the live peer then takes it, never beside another leader', async () => {
    const w = world();
    const { leader, oldPeer: peer } = await oldTemplateOnly(w);
    addGhosts(w, [{ identity: 'ghost-1', hash: 'aaa' }]); // preferred: it started earliest
    acceptsThenDies(w, 'ghost-1'); // answers the offer, then never takes the Lease
    const electors = { 'old-1': leader.elector, 'old-2': peer.elector };

    const stop = settle(w, leader.elector.stop());
    await stepUntil(w, electors, () => handedTo(w, 'ghost-1'));
    const { record } = w.lock.read()!;
    assert.equal(record.leaseDurationSeconds, 4, 'reserved for one offer window');
    const tookMs = await stepUntil(w, electors, () => peer.elector.isLeader());
    await stop;

    // The reservation by old-2's own observation, plus at most one of its retries (no jitter).
    assert.ok(tookMs <= WINDOW_MS + s(2) + 100, `the peer led ${tookMs} ms after the handoff`);
    assert.ok(tookMs >= WINDOW_MS, `not before the reservation ended: ${tookMs} ms`);
    assert.deepEqual(peer.log.events, [`started ${record.leaseTransitions + 1}`]);
    await settle(w, peer.elector.stop());
  });

  test('transferLeadership(to): the target accepted and died; the old leader, a candidate again, takes the Lease back after the offer window with a new term', async () => {
    const w = world();
    const a = candidate('a', w, { podTemplateHash: 'h' });
    a.elector.start();
    await w.clock.advance(s(1));
    addGhosts(w, [{ identity: 'ghost-1', hash: 'h' }]);
    acceptsThenDies(w, 'ghost-1');

    await settle(w, a.elector.transferLeadership('ghost-1'));
    const handoff = w.lock.read()!.record;
    assert.equal(handoff.holderIdentity, 'ghost-1');
    assert.equal(handoff.leaseDurationSeconds, 4);
    const tookMs = await stepUntil(w, { a: a.elector }, () => a.elector.isLeader());

    assert.ok(tookMs <= WINDOW_MS + s(2) + 100, `a led again ${tookMs} ms after the handoff`);
    assert.deepEqual(a.log.events, [
      'started 0',
      'stopped 0',
      `started ${handoff.leaseTransitions + 1}`,
    ]);
    await settle(w, a.elector.stop());
  });

  test('an unoffered handoff (the target does not advertise itself) keeps the full bound: nothing proved the target alive', async () => {
    const w = world();
    const a = candidate('a', w, { podTemplateHash: 'h' });
    a.elector.start();
    await w.clock.advance(s(1));

    await settle(w, a.elector.transferLeadership('client-go-peer'));

    assert.equal(w.lock.read()!.record.leaseDurationSeconds, 15);
    await settle(w, a.elector.stop());
  });

  test('an accepted target whose takeover lands late (3, 6 or 12 s after it was sent), racing the others (the old leader among them) for the expired reservation: one leads, never two by anyone’s view', async () => {
    for (const delayMs of [s(3), s(6), s(12)]) {
      const w = world();
      const a = candidate('a', w, { podTemplateHash: 'h' });
      a.elector.start();
      await w.clock.advance(s(1));
      const slowLock = new LateWrites(w.lock, w.clock);
      const b = candidate('b', w, { podTemplateHash: 'h', lock: slowLock }); // preferred
      b.elector.start();
      await w.clock.advance(s(1));
      const c = candidate('c', w, { podTemplateHash: 'h' });
      c.elector.start();
      await w.clock.advance(s(1));
      const electors = { a: a.elector, b: b.elector, c: c.elector };

      slowLock.delayAfterAcceptingMs = delayMs; // b's takeover lands late
      const transfer = a.elector.transferLeadership('b');
      await stepUntil(w, electors, () => handedTo(w, 'b'));
      await transfer;
      const anyLeads = () => Object.values(electors).some((e) => e.isLeader());
      await stepUntil(w, electors, anyLeads, s(30));
      await stepUntil(w, electors, () => false, s(20)).catch(() => undefined); // 20 s more

      const leaders = Object.entries(electors).filter(([, e]) => e.isLeader());
      assert.equal(leaders.length, 1, `delay ${delayMs} ms: one leader`);
      if (delayMs < WINDOW_MS) {
        assert.equal(leaders[0]![0], 'b', 'within the reservation the target takes it');
      } else {
        assert.notEqual(leaders[0]![0], 'b', 'after it, the expired reservation was taken…');
        assert.deepEqual(b.log.events, [], '…and the late takeover never began a term');
      }
      const { record } = w.lock.read()!;
      assert.equal(record.holderIdentity, leaders[0]![0], `delay ${delayMs} ms`);
      const started = [a, b, c].flatMap((x) => x.log.terms.map((t) => t.leaseTransitions));
      assert.equal(new Set(started).size, started.length, 'no fencing token used twice');
      slowLock.delayMs = 0;
      await settle(w, Promise.all([a.elector.stop(), b.elector.stop(), c.elector.stop()]));
    }
  });
});

/**
 * One candidate's view of a shared `MemoryLock` whose writes take `delayMs` (settable; 0 at
 * first) to land, the version checked when they land: a candidate too slow to answer in time
 * (or, with `delayAfterAcceptingMs`, slow only from its acceptance on).
 */
class LateWrites implements ResourceLock {
  readonly description: string;
  readonly storesCandidates = true;
  delayMs = 0;
  /** Once set, `delayMs` becomes this after the candidate's acceptance of an offer has landed. */
  delayAfterAcceptingMs: number | undefined;

  constructor(
    private readonly inner: MemoryLock,
    private readonly clock: ManualClock,
  ) {
    this.description = inner.description;
  }

  get(signal?: AbortSignal): Promise<VersionedLeaseRecord | undefined> {
    return this.inner.get(signal);
  }

  create(record: LeaseRecord, signal?: AbortSignal): Promise<string> {
    return this.inner.create(record, signal);
  }

  async update(record: LeaseRecord, version: string, signal?: AbortSignal): Promise<string> {
    if (this.delayMs > 0) await this.clock.sleep(this.delayMs);
    const written = await this.inner.update(record, version, signal);
    if (record.handoffOffer?.accepted && this.delayAfterAcceptingMs !== undefined) {
      this.delayMs = this.delayAfterAcceptingMs;
    }
    return written;
  }
}
