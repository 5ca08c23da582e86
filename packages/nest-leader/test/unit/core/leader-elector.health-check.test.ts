import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  checkElectionHealth,
  type ElectionHealthSnapshot,
} from '../../../dist/esm/core/election/leader-elector.health.js';

const LEASE_DURATION_MS = 15_000;

function snapshot(overrides: Partial<ElectionHealthSnapshot> = {}): ElectionHealthSnapshot {
  return {
    lock: 'Lease default/test',
    state: 'running',
    term: undefined,
    nowMs: 100_000,
    leaseDurationMs: LEASE_DURATION_MS,
    ...overrides,
  };
}

const holding = (lastRenewStartMs: number) => ({
  holding: new AbortController().signal,
  lastRenewStartMs,
});

describe('checkElectionHealth (client-go healthzadaptor)', () => {
  test('a follower and a leader renewing on time are healthy', () => {
    assert.deepEqual(checkElectionHealth(snapshot(), 0), { healthy: true });
    assert.deepEqual(checkElectionHealth(snapshot({ term: holding(90_000) }), 0), {
      healthy: true,
    });
  });

  test('a leader that has not renewed for longer than leaseDuration + tolerance is wedged', () => {
    const wedged = snapshot({ term: holding(100_000 - LEASE_DURATION_MS - 1) });

    const health = checkElectionHealth(wedged, 0);

    assert.equal(health.healthy, false);
    assert.match(health.reason!, /last renewed it 15\.001s ago/);
    assert.deepEqual(checkElectionHealth(wedged, 1), { healthy: true }, 'within the tolerance');
  });

  test('a term that lost its Lease and is draining is healthy however long it drains', () => {
    const lost = new AbortController();
    lost.abort();

    const draining = snapshot({ term: { holding: lost.signal, lastRenewStartMs: 0 } });

    assert.deepEqual(checkElectionHealth(draining, 0), { healthy: true });
  });

  test('a dead loop and a stop after a loss are unhealthy, with why', () => {
    const failed = checkElectionHealth(
      snapshot({ state: 'failed', loopError: new Error('bug') }),
      0,
    );
    const lost = checkElectionHealth(snapshot({ state: 'lost' }), 0);

    assert.equal(failed.healthy, false);
    assert.match(failed.reason!, /stopped unexpectedly: .*bug/);
    assert.equal(lost.healthy, false);
    assert.match(lost.reason!, /onLost: 'stop'/);
  });
});
