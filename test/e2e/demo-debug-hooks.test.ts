/**
 * The demo's fault-injection hooks, used by the chaos harness (test/chaos): the term-bound
 * heartbeat loop (`LEADER_HEARTBEAT_MS`) and `POST /debug/block-event-loop` (only with
 * `DEMO_DEBUG_HOOKS=1`). One replica on a file lock in a temporary directory.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LeaderWorkEvent, LeadershipAcquiredEvent } from '@nest-leader/demo/demo-events';
import type { ReplicaProcess } from '@nest-leader/demo/launcher/replica-process';
import { isLoopbackAddress } from '@nest-leader/demo/debug/loopback-only.guard';
import { startFileLockLeader } from './support/file-lock-leader.js';

describe('demo fault-injection hooks', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'nest-leader-e2e-hooks-'));
  const started: ReplicaProcess[] = [];
  after(() => {
    for (const replica of started) replica.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const leader = (env: Record<string, string>) =>
    startFileLockLeader(dir, `hooks-${started.length + 1}`, env, (r) => started.push(r));

  it('without DEMO_DEBUG_HOOKS there is no debug endpoint and no heartbeat loop', async () => {
    const replica = await leader({});
    const { status } = await replica.request('/debug/block-event-loop?ms=100', { method: 'POST' });
    assert.equal(status, 404);
    await sleep(500);
    const beats = replica.events.filter(
      (r) => r.event.event === 'leader-work' && r.event.task === 'heartbeat',
    );
    assert.equal(beats.length, 0);
    await replica.stop();
  });

  it('heartbeats carry the term token and live: true; a 1.5 s block stops them and the HTTP server', async () => {
    const replica = await leader({ DEMO_DEBUG_HOOKS: '1', LEADER_HEARTBEAT_MS: '50' });
    await sleep(500);
    const acquired = replica.events.find((r) => r.event.event === 'leadership-acquired')!
      .event as LeadershipAcquiredEvent;
    const beatsBefore = replica.events
      .map((r) => r.event)
      .filter((e): e is LeaderWorkEvent => e.event === 'leader-work' && e.task === 'heartbeat');
    assert.ok(beatsBefore.length >= 5, `${beatsBefore.length} heartbeats in 0.5 s at 50 ms`);
    for (const beat of beatsBefore) {
      assert.equal(beat.leaseTransitions, acquired.leaseTransitions);
      assert.equal(beat.live, true);
    }

    const bad = await replica.request('/debug/block-event-loop?ms=0', { method: 'POST' });
    assert.equal(bad.status, 400);
    const { status } = await replica.request('/debug/block-event-loop?ms=1500', {
      method: 'POST',
    });
    assert.equal(status, 202);
    await sleep(100); // the block starts just after the answer went out
    const askedAt = performance.now();
    await replica.request('/leader', { timeoutMs: 5000 });
    const answeredAfterMs = performance.now() - askedAt;
    assert.ok(answeredAfterMs >= 1200, `GET /leader answered after ${answeredAfterMs} ms`);
    assert.ok(replica.running, 'it survives the block');

    await sleep(300);
    const times = replica.events
      .map((r) => r.event)
      .filter((e): e is LeaderWorkEvent => e.event === 'leader-work' && e.task === 'heartbeat')
      .map((e) => Date.parse(e.at));
    const longestPauseMs = Math.max(...times.slice(1).map((t, i) => t - times[i]!));
    assert.ok(longestPauseMs >= 1400, `the loop paused ${longestPauseMs} ms at most`);
    await replica.stop();
  });

  it('answers only connections from loopback (the socket address; the cluster tier checks a pod IP gets 403)', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) {
      assert.ok(isLoopbackAddress(address), address);
    }
    for (const address of [
      '10.244.0.7',
      '::ffff:10.244.0.7',
      'fe80::1',
      '0.0.0.0',
      '',
      undefined,
    ]) {
      assert.ok(!isLoopbackAddress(address), String(address));
    }
  });
});
