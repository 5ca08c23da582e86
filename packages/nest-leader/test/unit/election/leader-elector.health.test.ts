import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { candidate, RecordingLogger, s, world } from './elector.fixture.js';

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

  test('unhealthy when it believes it leads but has not renewed for leaseDuration + tolerance', async () => {
    const w = world();
    const { elector } = candidate('a', w, {
      callbacks: { onStoppedLeading: () => new Promise<void>(() => undefined) },
    });
    elector.start();
    await w.clock.advance(0);
    w.lock.hangNext('any', 1000);

    await w.clock.advance(s(15));
    assert.equal(elector.health().healthy, true);
    await w.clock.advance(1);
    assert.equal(elector.health().healthy, false);
    assert.match(elector.health().reason!, /last renewed it 15\.001s ago/);
    assert.equal(elector.health(s(5)).healthy, true);
    await w.clock.advance(s(5));
    assert.equal(elector.health(s(5)).healthy, false);
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
      if (message.includes('started leading')) throw new Error('logger exploded');
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
