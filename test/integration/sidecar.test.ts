/**
 * The `nest-leader-elector` sidecar as real processes on the real kube-apiserver: three of
 * them (each with its own ServiceAccount identity and leader file) elect one leader, agree on
 * it over `GET /`, and move the name and the file when the leader's sidecar is killed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { parseSidecarArgs } from 'nest-leader';
import { getTestCluster, kubeConfigFor, uniqueLeaseName } from '../support/cluster.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { readStoredRecord } from '../support/lock-history.js';
import { SidecarProcess } from '../support/sidecar-process.js';
import { eventually } from '../support/eventually.js';
import { loadAllYaml, type V1Deployment, type V1Role } from '@kubernetes/client-node';
import { applyManifests } from '@nest-leader/demo/launcher/demo-manifests';
import { repoRoot } from '../support/control-plane.js';
import { join } from 'node:path';

const cluster = getTestCluster();
const IDENTITIES = ['alice', 'bob', 'carol'] as const;
/** --ttl 4s: leaseDuration 4 s, renew deadline 2 s, retry period 1 s. */
const TTL_SECONDS = 4;
const RETRY_MS = (TTL_SECONDS / 4) * 1000;
const admin = kubeConfigFor(cluster);

describe('nest-leader-elector sidecar on the real kube-apiserver', () => {
  const election = uniqueLeaseName('sidecar');
  const common = ['--election', election, '--election-namespace', cluster.namespace];
  const sidecars: SidecarProcess[] = [];
  let leader: SidecarProcess;

  const start = (id: string, identity: string, leaderFile?: string) => {
    const sidecar = new SidecarProcess(
      id,
      [...common, '--ttl', `${TTL_SECONDS}s`],
      cluster.identities[identity]!.kubeconfigPath,
      leaderFile,
    );
    sidecars.push(sidecar);
    return sidecar;
  };
  const live = () =>
    sidecars.filter((s) => s.child.exitCode === null && s.child.signalCode === null);

  /** Waits until every live sidecar's `GET /` names the same leader; returns that sidecar. */
  async function agreedLeader(timeoutMs: number, not?: SidecarProcess): Promise<SidecarProcess> {
    return eventually(
      async () => {
        const answers = await Promise.all(live().map((s) => s.get('/')));
        const names = answers.map((a) => a?.body.name);
        assert.ok(
          names.every((n) => typeof n === 'string' && n !== '' && n === names[0]),
          `names ${names}`,
        );
        const found = live().find((s) => s.id === names[0]);
        assert.ok(found && found !== not, `leader ${names[0]} is a live sidecar`);
        for (const a of answers) assert.equal(typeof a!.body.last_update, 'string');
        return found;
      },
      { timeoutMs, intervalMs: 100 },
    );
  }

  /** /ready is 200 on the leader only, and only the leader's file exists. */
  async function assertOnlyLeaderReady(expected: SidecarProcess): Promise<void> {
    await eventually(
      async () => {
        for (const s of live()) {
          const ready = await s.get('/ready');
          assert.equal(ready?.status, s === expected ? 200 : 503, `/ready on ${s.id}`);
          assert.equal(s.hasLeaderFile(), s === expected, `leader file of ${s.id}`);
        }
      },
      { timeoutMs: 3 * RETRY_MS },
    );
    const content = JSON.parse(readFileSync(expected.leaderFile, 'utf8')) as {
      name: string;
      leaseTransitions: number;
    };
    const stored = await readStoredRecord(admin, 'lease', election, cluster.namespace);
    assert.equal(content.name, expected.id);
    assert.equal(stored?.holderIdentity, expected.id);
    assert.equal(
      content.leaseTransitions,
      stored?.transitions,
      'the file carries the fencing token',
    );
  }

  before(async () => {
    for (const identity of IDENTITIES) await grantLeaseAccess(cluster, identity);
  });
  after(async () => {
    for (const s of sidecars) s.kill('SIGKILL');
    await Promise.all(sidecars.map((s) => s.exited));
    for (const identity of IDENTITIES) await revokeLeaseAccess(cluster, identity);
  });

  test('three sidecars elect one leader; GET / agrees on every replica', async () => {
    IDENTITIES.forEach((identity, i) => start(`pod-${i + 1}`, identity));
    leader = await agreedLeader(2 * TTL_SECONDS * 1000);
    await assertOnlyLeaderReady(leader);
    for (const s of live()) assert.equal((await s.get('/healthz'))?.status, 200);
  });

  test('the leader file is rewritten while leading (mtime younger than the retry period + slack)', async () => {
    await new Promise((r) => setTimeout(r, 2.5 * RETRY_MS));
    const ageMs = Date.now() - statSync(leader.leaderFile).mtimeMs;
    assert.ok(ageMs <= RETRY_MS + 500, `leader file age ${Math.round(ageMs)} ms`);
  });

  test('SIGKILL of the leader: the name and the file move to another sidecar', async () => {
    const killedAt = performance.now();
    const old = leader;
    old.kill('SIGKILL');
    await old.exited;
    leader = await agreedLeader(TTL_SECONDS * 1000 + 3 * RETRY_MS + 2000, old);
    const ms = performance.now() - killedAt;
    await assertOnlyLeaderReady(leader);
    process.stdout.write(
      `# sidecar SIGKILL → new leader agreed by every GET /: ${Math.round(ms)} ms\n`,
    );
    // A killed sidecar cannot remove its file; its container's restart does, before campaigning.
    assert.ok(old.hasLeaderFile(), 'the dead sidecar left its file');
    const restarted = start(old.id, 'alice', old.leaderFile);
    await restarted.address();
    assert.equal(restarted.hasLeaderFile(), false, 'a restarted sidecar removes a stale file');
    assert.equal((await restarted.get('/ready'))?.status, 503);
  });

  test('SIGTERM of the leader: it releases, exits 0, removes its file; another leads at once', async () => {
    const old = leader;
    const stoppedAt = performance.now();
    old.kill('SIGTERM');
    const exit = await old.exited;
    assert.equal(exit.code, 0);
    assert.equal(old.hasLeaderFile(), false);
    leader = await agreedLeader(1.2 * RETRY_MS + 2000, old);
    const ms = performance.now() - stoppedAt;
    await assertOnlyLeaderReady(leader);
    process.stdout.write(
      `# sidecar SIGTERM → new leader agreed by every GET /: ${Math.round(ms)} ms\n`,
    );
    assert.ok(ms < TTL_SECONDS * 1000, `released, not expired: ${Math.round(ms)} ms`);
  });

  test('POST /transfer?to=<id>: the named sidecar leads at once; 409 on a follower, 400 for a bad target, 405 for GET', async () => {
    const old = leader;
    const target = live().find((s) => s !== old)!;
    assert.equal((await old.request(`/transfer?to=${target.id}`, 'GET'))?.status, 405);
    const onFollower = await target.request(`/transfer?to=${old.id}`, 'POST');
    assert.equal(onFollower?.status, 409, JSON.stringify(onFollower?.body));
    assert.match(String(onFollower?.body.error), /not/);
    for (const bad of ['', `?to=${old.id}`, `?to=${target.id}&leaseDurationSeconds=1.5`]) {
      const refused = await old.request(`/transfer${bad}`, 'POST');
      assert.equal(refused?.status, 400, `${bad}: ${JSON.stringify(refused?.body)}`);
    }
    const before = await readStoredRecord(admin, 'lease', election, cluster.namespace);
    const orderedAt = performance.now();
    const answer = await old.request(`/transfer?to=${target.id}`, 'POST');
    assert.equal(answer?.status, 200, JSON.stringify(answer?.body));
    assert.deepEqual(answer?.body, {
      to: target.id,
      leaseDurationSeconds: TTL_SECONDS,
      leaseTransitions: before!.transitions! + 1,
    });
    await eventually(async () => assert.equal((await target.get('/ready'))?.status, 200), {
      timeoutMs: 1.2 * RETRY_MS + 2000,
      intervalMs: 20,
    });
    const ms = performance.now() - orderedAt;
    leader = target;
    await assertOnlyLeaderReady(leader);
    const after = await readStoredRecord(admin, 'lease', election, cluster.namespace);
    assert.equal(
      after!.transitions,
      before!.transitions! + 1,
      "the target's term keeps the handoff's transitions: one handover, one transition",
    );
    process.stdout.write(`# sidecar POST /transfer → target /ready 200: ${Math.round(ms)} ms\n`);
  });

  test('bad flags exit 2 with a message naming the flag', async () => {
    const kubeconfig = cluster.identities.alice!.kubeconfigPath;
    const missing = new SidecarProcess('x', ['--ttl', '4s'], kubeconfig, undefined, true);
    assert.equal((await missing.exited).code, 2);
    assert.match(missing.lines.join('\n'), /"--election": is required/);
    const ttl = new SidecarProcess(
      'x',
      ['--election', 'a', '--ttl', '10'],
      kubeconfig,
      undefined,
      true,
    );
    assert.equal((await ttl.exited).code, 2);
    assert.match(ttl.lines.join('\n'), /"--ttl": must be a Go duration/);
  });

  test('the example Deployment (app + sidecar, shared emptyDir) is valid for the API server', async () => {
    const file = join(repoRoot, 'packages/nest-leader/sidecar/deploy/sidecar-example.yaml');
    const objects = loadAllYaml(readFileSync(file, 'utf8')) as { kind: string }[];
    const applied = await applyManifests(admin, objects as never[], { dryRun: true });
    assert.deepEqual(
      applied.map((a) => a.kind),
      ['ServiceAccount', 'Role', 'RoleBinding', 'Deployment'],
    );
    const role = objects.find((o) => o.kind === 'Role') as V1Role;
    assert.deepEqual(JSON.parse(JSON.stringify(role.rules)), [
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'create', 'update'],
      },
    ]);
    const pod = (objects.find((o) => o.kind === 'Deployment') as V1Deployment).spec!.template.spec!;
    const [app, sidecar] = pod.containers;
    const mount = (c: typeof app) => c!.volumeMounts!.find((m) => m.name === 'leader-election')!;
    assert.equal(pod.volumes![0]!.emptyDir !== undefined, true);
    assert.equal(mount(app).mountPath, mount(sidecar).mountPath);
    assert.ok(sidecar!.args!.includes(`--leader-file=${mount(sidecar).mountPath}/is-leader`));
    assert.ok(sidecar!.args!.includes('--http=:4040'), 'probes reach the pod IP');
    assert.deepEqual(
      parseSidecarArgs(
        sidecar!.args!.map((a) => a.replace(/\$\((\w+)\)/, 'x')),
        { hostname: 'h' },
      ).http,
      {
        host: '0.0.0.0',
        port: 4040,
      },
    );
  });
});
