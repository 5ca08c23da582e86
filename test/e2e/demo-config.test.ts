/**
 * The demo validates its environment at startup and fails with a message naming every bad
 * variable (exit status 78, EX_CONFIG), instead of running a replica that never leads.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ReplicaProcess } from '@nest-leader/demo/launcher/replica-process';
import { withTimeout } from '../support/with-timeout.js';

describe('demo configuration from the environment', { timeout: 60_000 }, () => {
  // No cluster anywhere: HOME without ~/.kube, no KUBECONFIG.
  const home = mkdtempSync(join(tmpdir(), 'nest-leader-e2e-config-'));
  const started: ReplicaProcess[] = [];
  after(() => {
    for (const replica of started) replica.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });

  async function run(env: Record<string, string>) {
    const replica = ReplicaProcess.start({
      identity: 'config-check',
      port: 0,
      env: { HOME: home, TMPDIR: home, KUBECONFIG: undefined, ...env },
    });
    started.push(replica);
    const exit = await withTimeout(replica.exited, 30_000, 'the demo to exit');
    return { exit, stderr: replica.stderrTail, events: replica.events };
  }

  it('lists every invalid variable and exits with 78', async () => {
    const { exit, stderr, events } = await run({
      PORT: '99999',
      LEASE_NAME: 'Not_A_Name',
      LEASE_DURATION_SECONDS: '4.5',
      RETRY_PERIOD_SECONDS: '0',
      LEADER_LOCK: 'etcd',
      METRICS: 'yes',
    });
    assert.equal(exit.code, 78);
    assert.deepEqual(events, [], 'it never started');
    assert.match(stderr, /invalid demo configuration:/);
    assert.match(stderr, /PORT must be a whole number from 0 to 65535, got "99999"/);
    assert.match(stderr, /LEASE_NAME must be a Kubernetes object name .*got "Not_A_Name"/);
    assert.match(stderr, /LEASE_DURATION_SECONDS must be a whole number > 0, got "4.5"/);
    assert.match(stderr, /RETRY_PERIOD_SECONDS must be a number > 0, got "0"/);
    assert.match(stderr, /LEADER_LOCK must be one of auto, kubernetes, file, got "etcd"/);
    assert.match(stderr, /METRICS must be on or off, got "yes"/);
  });

  it('rejects invalid fault-injection settings (DEMO_DEBUG_HOOKS, LEADER_HEARTBEAT_MS)', async () => {
    const { exit, stderr } = await run({ DEMO_DEBUG_HOOKS: 'yes', LEADER_HEARTBEAT_MS: '5' });
    assert.equal(exit.code, 78);
    assert.match(stderr, /DEMO_DEBUG_HOOKS must be 1, true, 0 or false, got "yes"/);
    assert.match(stderr, /LEADER_HEARTBEAT_MS must be a whole number ≥ 10, got "5"/);
  });

  it("reports timings the library rejects with the library's rule", async () => {
    const { exit, stderr } = await run({
      LEASE_DURATION_SECONDS: '4',
      RENEW_DEADLINE_SECONDS: '5',
    });
    assert.equal(exit.code, 78);
    assert.match(
      stderr,
      /invalid configuration: .*renewDeadlineSeconds.*must be less than leaseDurationSeconds \(4\)/,
    );
  });

  it('refuses LEADER_LOCK=kubernetes when no cluster is configured', async () => {
    const { exit, stderr } = await run({ LEADER_LOCK: 'kubernetes' });
    assert.equal(exit.code, 78);
    assert.match(stderr, /invalid configuration: .*needs a cluster/);
  });
});
