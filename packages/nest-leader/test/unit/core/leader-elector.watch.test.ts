import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LeaseApiError } from 'nest-leader';
import { ManualClock } from 'nest-leader/testing';
import { RecordingLogger } from 'nest-leader/testing';
import { candidate, s } from './elector.fixture.js';
import { WatchHub, type WatchableLockView } from './watchable-memory-lock.fixture.js';

/** `a` leads, `b` follows; each reaches the same record through its own view of the hub. */
async function watchedElection(options: { bWatches?: boolean; aReleases?: boolean } = {}) {
  const hub = new WatchHub();
  const clock = new ManualClock();
  const aLock = hub.view();
  const bLock = hub.view();
  const bLogger = new RecordingLogger();
  const a = candidate(
    'a',
    { lock: hub.store, clock },
    { lock: aLock, releaseOnStop: options.aReleases ?? true },
  ).elector;
  const b = candidate(
    'b',
    { lock: hub.store, clock, logger: bLogger },
    { lock: bLock, watchLease: options.bWatches ?? true },
  );
  a.start();
  await clock.advance(0);
  b.elector.start();
  await clock.advance(s(1));
  return { hub, clock, a, b, aLock, bLock, bLogger };
}

function getsDuring(lock: WatchableLockView, run: () => Promise<void>): Promise<number> {
  const before = lock.calls.get;
  return run().then(() => lock.calls.get - before);
}

describe('LeaderElector: followers that watch the Lease', () => {
  test('with a healthy watch a follower sends no request while the leader renews', async () => {
    const { clock, a, b, bLock } = await watchedElection();
    assert.equal(a.isLeader(), true);
    assert.equal(b.elector.leader, 'a');
    const gets = await getsDuring(bLock, () => clock.advance(s(120)));
    assert.equal(gets, 0);
    assert.equal(bLock.calls.update + bLock.calls.create, 0);
    assert.equal(bLock.calls.watch, 1);
    assert.equal(a.isLeader(), true);
    assert.equal(b.elector.isLeader(), false);
  });

  test('polling (watchLease: false) reads every retryPeriod × [1, 1.2) instead', async () => {
    const { clock, bLock } = await watchedElection({ bWatches: false });
    const gets = await getsDuring(bLock, () => clock.advance(s(120)));
    assert.equal(gets, 60, 'one GET every 2 s (jitter 0)');
    assert.equal(bLock.calls.watch, 0);
  });

  test('a released Lease is taken the moment the release arrives, without waiting for a retry', async () => {
    const { clock, a, b } = await watchedElection();
    await clock.advance(s(0.7));
    const releasedAtMs = clock.nowMs();
    await a.stop();
    await clock.settle();
    assert.equal(b.elector.isLeader(), true);
    assert.equal(clock.nowMs(), releasedAtMs, 'no time passed on the clock');
    assert.deepEqual(b.log.events, [`started 1`]);
  });

  test('after a crash the follower takes over exactly leaseDuration after the last renewal it saw', async () => {
    const { clock, a, b } = await watchedElection({ aReleases: false });
    await clock.advance(s(10.5));
    // Crash: no more renewals, no release. The last renewal was at 10 s (every 2 s from 0).
    await a.stop();
    const lastRenewalMs = s(10);
    await clock.advance(lastRenewalMs + s(15) - clock.nowMs() - 1);
    assert.equal(b.elector.isLeader(), false, 'not before leaseDuration');
    await clock.advance(2);
    assert.equal(b.elector.isLeader(), true, 'right after leaseDuration');
  });

  test('a silent watch never shortens the wait: the follower reads at expiry, sees the renewals, and polls until the watch speaks again', async () => {
    const { hub, clock, a, b, bLock, bLogger } = await watchedElection();
    hub.silent = true;
    const gets = await getsDuring(bLock, () => clock.advance(s(15)));
    assert.equal(gets, 1, 'one read when the lease would have expired');
    assert.equal(b.elector.isLeader(), false);
    assert.equal(a.isLeader(), true);
    assert.equal(bLock.calls.reconnect, 1, 'the watch is reconnected');
    assert.equal(bLogger.matching('debug', 'missed a change').length, 1);

    const polled = await getsDuring(bLock, () => clock.advance(s(20)));
    assert.ok(polled >= 9, `polls every retryPeriod meanwhile (${polled} GETs in 20 s)`);
    assert.equal(b.elector.isLeader(), false);

    hub.silent = false;
    await clock.advance(s(2)); // the next renewal arrives
    const after = await getsDuring(bLock, () => clock.advance(s(30)));
    assert.equal(after, 0, 'trusts the watch again');
  });

  test('a broken watch falls back to polling at once, and stops polling when it reconnects', async () => {
    const { hub, clock, bLock, bLogger } = await watchedElection();
    hub.disconnectAll(new Error('connection reset'));
    const polled = await getsDuring(bLock, () => clock.advance(s(10)));
    assert.equal(polled, 6, 'one read at once, then one every retryPeriod');
    assert.equal(bLogger.matching('debug', 'connection reset').length, 1);
    hub.reconnectAll();
    await clock.advance(s(2));
    const after = await getsDuring(bLock, () => clock.advance(s(30)));
    assert.equal(after, 0);
  });

  test('watch refused (no RBAC watch): one warning naming the verb, then polling for good', async () => {
    const { hub, clock, b, bLock, bLogger } = await watchedElection();
    const forbidden = new LeaseApiError({
      kind: 'forbidden',
      verb: 'watch',
      name: 'lease',
      namespace: 'default',
      statusCode: 403,
    });
    hub.refuseAll(forbidden);
    const polled = await getsDuring(bLock, () => clock.advance(s(10)));
    assert.equal(polled, 6, 'one read at once, then one every retryPeriod');
    const warnings = bLogger.matching('warn', 'Cannot watch');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /Cannot watch leases\.coordination\.k8s\.io "lease"/);
    assert.match(warnings[0]!, /verb watch/);
    assert.match(warnings[0]!, /poll/);
    assert.equal(b.elector.isLeader(), false);
    assert.equal(hub.watcherCount, 0);
  });

  test('the leader does not watch: the watch ends when the follower starts leading', async () => {
    const { hub, clock, a, b } = await watchedElection();
    assert.equal(hub.watcherCount, 1, "only b's watch");
    await a.stop();
    await clock.settle();
    assert.equal(b.elector.isLeader(), true);
    assert.equal(hub.watcherCount, 0);
  });
});
