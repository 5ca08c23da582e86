/**
 * A Nest application following its pod's `nest-leader-elector` sidecar (`lock: { sidecar }`):
 * two "pods" (a sidecar and an app each, real processes, real API server). Only the app whose
 * sidecar leads runs its `@LeaderOnly()` job, under the sidecar's fencing token; when that
 * sidecar is killed the job moves with the leadership, without overlap.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { getTestCluster, kubeConfigFor, uniqueLeaseName } from '../support/cluster.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { readStoredRecord } from '../support/lock-history.js';
import { SidecarProcess } from '../support/sidecar-process.js';
import { repoRoot } from '../support/control-plane.js';
import { eventually } from '../support/eventually.js';

const cluster = getTestCluster();
const APP = join(repoRoot, 'test/dist/support/sidecar-follower-app.main.js');
const TTL_SECONDS = 6;
/** The app's renewDeadline (see sidecar-follower-app.main.ts). */
const APP_RENEW_DEADLINE_MS = 1000;

interface Work {
  identity: string;
  token: number;
  atMs: number;
}

class FollowerApp {
  readonly work: Work[] = [];
  readonly lines: string[] = [];
  readonly child: ChildProcess;
  constructor(
    readonly identity: string,
    sidecarUrl: string,
  ) {
    this.child = spawn(process.execPath, [APP, '--identity', identity, '--sidecar', sidecarUrl], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      this.lines.push(line);
      if (!line.startsWith('{')) return;
      const event = JSON.parse(line) as { event: string; token?: number };
      if (event.event === 'leader-work') {
        this.work.push({ identity, token: event.token!, atMs: performance.now() });
      }
    });
    createInterface({ input: this.child.stderr! }).on('line', (line) => this.lines.push(line));
  }
}

describe('a Nest app following its sidecar (lock: { sidecar })', () => {
  const election = uniqueLeaseName('follow');
  const pods: { sidecar: SidecarProcess; app: FollowerApp }[] = [];

  before(async () => {
    await grantLeaseAccess(cluster, 'alice');
    await grantLeaseAccess(cluster, 'bob');
    for (const [i, identity] of ['alice', 'bob'].entries()) {
      const id = `pod-${i + 1}`;
      const sidecar = new SidecarProcess(
        id,
        [
          '--election',
          election,
          '--election-namespace',
          cluster.namespace,
          '--ttl',
          `${TTL_SECONDS}s`,
        ],
        cluster.identities[identity]!.kubeconfigPath,
      );
      const address = await sidecar.address();
      pods.push({ sidecar, app: new FollowerApp(id, `http://${address}`) });
    }
  });
  after(async () => {
    for (const { sidecar, app } of pods) {
      sidecar.kill('SIGKILL');
      app.child.kill('SIGKILL');
    }
    await revokeLeaseAccess(cluster, 'alice');
    await revokeLeaseAccess(cluster, 'bob');
  });

  const leadingPod = async () => {
    for (const pod of pods) if ((await pod.sidecar.get('/ready'))?.status === 200) return pod;
    return undefined;
  };

  test("only the app whose sidecar leads runs @LeaderOnly work, under the sidecar's token", async () => {
    const leader = await eventually(
      async () => {
        const pod = await leadingPod();
        assert.ok(pod, 'a sidecar leads');
        assert.ok(
          pod.app.work.length > 0,
          `its app works:\n${pod.app.lines.slice(-10).join('\n')}`,
        );
        return pod;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    const since = performance.now();
    await new Promise((r) => setTimeout(r, 2000));
    const other = pods.find((p) => p !== leader)!;
    assert.equal(other.app.work.length, 0, 'the other app never ran leader-only work');
    assert.ok(
      leader.app.work.filter((w) => w.atMs > since).length >= 10,
      'the leader keeps working',
    );
    const stored = await readStoredRecord(
      kubeConfigFor(cluster),
      'lease',
      election,
      cluster.namespace,
    );
    assert.equal(stored?.holderIdentity, leader.sidecar.id);
    assert.deepEqual(
      [...new Set(leader.app.work.map((w) => w.token))],
      [stored!.transitions],
      "the app's term carries the sidecar's leaseTransitions",
    );
  });

  test('SIGKILL of the leading sidecar: its app stops within its renewDeadline, the other app takes over after, never both', async () => {
    const leader = (await leadingPod())!;
    const other = pods.find((p) => p !== leader)!;
    const killedAt = performance.now();
    leader.sidecar.kill('SIGKILL');
    await leader.sidecar.exited;
    await eventually(() => assert.ok(other.app.work.length > 0, 'the other app works'), {
      timeoutMs: TTL_SECONDS * 1000 + 5000,
      intervalMs: 100,
    });
    const lastOld = leader.app.work.at(-1)!.atMs;
    const firstNew = other.app.work[0]!.atMs;
    process.stdout.write(
      `# sidecar follower: old app's last leader work ${Math.round(lastOld - killedAt)} ms after its sidecar's SIGKILL, ` +
        `the other app's first ${Math.round(firstNew - killedAt)} ms after\n`,
    );
    assert.ok(
      lastOld - killedAt <= APP_RENEW_DEADLINE_MS + 500,
      'the old app stepped down at its renewDeadline',
    );
    assert.ok(lastOld < firstNew, 'no overlap');
    assert.ok(other.app.work[0]!.token > leader.app.work.at(-1)!.token, 'a newer fencing token');
  });
});
