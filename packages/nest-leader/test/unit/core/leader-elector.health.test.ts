import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RecordingLogger } from 'nest-leader/testing';
import { candidate, s, world } from './elector.fixture.js';

describe('LeaderElector: health (as client-go HealthzAdaptor)', () => {
  test('healthy before start, while leading, as a follower and after stop', async () => {
    const w = world();
    const a = candidate('a', w);
    const b = candidate('b', w);
    assert.deepEqual(a.elector.health(), { healthy: true });

    a.elector.start();
    b.elector.start();
    await w.clock.advance(s(60));
    assert.deepEqual(a.elector.health(), { healthy: true });
    assert.deepEqual(b.elector.health(), { healthy: true });

    await a.elector.stop();
    await b.elector.stop();
    assert.deepEqual(a.elector.health(), { healthy: true });
  });

  test('unhealthy only when wedged: holding the Lease, not renewed for leaseDuration + tolerance', async () => {
    const w = world();
    const { elector, log } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);

    // Paused (event loop blocked): the step-down timer has not run.
    w.clock.jump(s(15));
    assert.equal(elector.health().healthy, true);
    w.clock.jump(1);
    assert.equal(elector.health().healthy, false);
    assert.match(elector.health().reason!, /last renewed it 15\.001s ago/);
    assert.equal(elector.health(s(5)).healthy, true);
    w.clock.jump(s(5));
    assert.equal(elector.health(s(5)).healthy, false);

    // Once its timers run it steps down (and may start a new term): not wedged any more.
    await w.clock.advance(0);
    assert.equal(log.terms[0]!.signal.reason.reason, 'renew-deadline-exceeded');
    assert.deepEqual(elector.health(), { healthy: true });
    await elector.stop();
  });

  test('healthy during a long onStoppedLeading drain after an API outage', async () => {
    const w = world();
    let finishDrain: (() => void) | undefined;
    const firstDrain = new Promise<void>((r) => (finishDrain = r));
    let drains = 0;
    const { elector } = candidate('a', w, {
      // The first drain (after the outage) takes as long as the test says; later ones are quick.
      callbacks: { onStoppedLeading: () => (drains++ === 0 ? firstDrain : undefined) },
    });
    elector.start();
    await w.clock.advance(0);
    w.lock.hangNext('any', 1000);

    for (let t = 0; t < s(120); t += s(1)) {
      await w.clock.advance(s(1));
      assert.deepEqual(elector.health(), { healthy: true }, `at ${w.clock.nowMs()} ms`);
    }
    assert.equal(elector.isLeader(), false);
    w.lock.clearFaults();
    finishDrain!();
    await w.clock.advance(s(30));
    assert.deepEqual(elector.health(), { healthy: true });
    await elector.stop();
  });

  test('healthy after a normal step-down: the term ended in time', async () => {
    const w = world();
    const { elector } = candidate('a', w);
    elector.start();
    await w.clock.advance(0);
    w.lock.hangNext('any', 1000);

    await w.clock.advance(s(60));

    assert.equal(elector.isLeader(), false);
    assert.deepEqual(elector.health(), { healthy: true });
    w.lock.clearFaults();
    await elector.stop();
  });

  test('unhealthy when the election loop fails unexpectedly, without an unhandled rejection', async () => {
    const w = world();
    const logger = new RecordingLogger();
    logger.info = (message) => {
      if (String(message).includes('started leading')) throw new Error('logger exploded');
    };
    const { elector, log } = candidate('a', { ...w, logger });

    elector.start();
    await w.clock.advance(0);

    const health = elector.health();
    assert.equal(health.healthy, false);
    assert.match(health.reason!, /logger exploded/);
    assert.equal(elector.isLeader(), false);
    assert.equal(log.terms.length, 0);
    await elector.stop();
  });

  test("unhealthy after losing with onLost 'stop' (client-go's process would exit)", async () => {
    const w = world();
    const { elector } = candidate('a', w, { onLost: 'stop' });
    elector.start();
    await w.clock.advance(0);
    w.lock.set({ holderIdentity: 'x', leaseDurationSeconds: 15, leaseTransitions: 1 });

    await w.clock.advance(s(2));

    assert.equal(elector.health().healthy, false);
    assert.match(elector.health().reason!, /onLost: 'stop'/);
  });
});
