/**
 * The `nest-leader-elector` sidecar as real processes on the real kube-apiserver: three of
 * them (each with its own ServiceAccount identity and leader file) elect one leader, agree on
 * it over `GET /`, and move the name and the file when the leader's sidecar is killed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { getTestCluster, kubeConfigFor, uniqueLeaseName } from '../support/cluster.js';
import { grantLeaseAccess, revokeLeaseAccess } from '../support/rbac.js';
import { readStoredRecord } from '../support/lock-history.js';
import { SidecarProcess } from '../support/sidecar-process.js';
import { rawGet, rawHttp } from '../support/raw-http.js';
import { eventually } from '../support/eventually.js';
import {
  loadAllYaml,
  type V1Deployment,
  type V1NetworkPolicy,
  type V1Role,
} from '@kubernetes/client-node';
import { applyManifests } from '@nest-leader/demo/launcher/demo-manifests';
import { repoRoot } from '../support/control-plane.js';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// The sidecar's flag parser belongs to the program (package nest-leader-elector, a bin without
// an entry): load it from the package's build.
const { parseSidecarArgs } = (await import(
  pathToFileURL(join(repoRoot, 'packages/nest-leader-elector/dist/sidecar-options.js')).href
)) as typeof import('../../packages/nest-leader-elector/dist/sidecar-options.js');

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
      [...common, '--ttl', `${TTL_SECONDS}s`, '--transfer-http', '127.0.0.1:0'],
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
      expiresAt: string;
      expiresAtUnixSeconds: number;
    };
    // Valid for leaseDuration − renewDeadline (ttl/2) from its last rewrite, which is at most
    // a retry period old: never beyond that, never already past on a live leader.
    const validForMs = Date.parse(content.expiresAt) - Date.now();
    assert.ok(
      validForMs > 0 && validForMs <= (TTL_SECONDS / 2) * 1000,
      `expires in ${validForMs} ms`,
    );
    assert.equal(content.expiresAtUnixSeconds, Math.floor(Date.parse(content.expiresAt) / 1000));
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

  test('hostile requests to the leader (GET //, GET http://[, a 100 KB header, a slow client) answer 4xx; it keeps serving and holding the Lease', async () => {
    const address = await leader.address();
    const before = await readStoredRecord(admin, 'lease', election, cluster.namespace);
    // A client that never finishes its headers: cut off by the headers timeout (5 s).
    const slowStartedMs = performance.now();
    const slow = rawHttp(address, 'GET / HTTP/1.1\r\nHost: sidecar\r\nX-Slow: ');
    for (const target of ['//', 'http://[']) {
      const answer = await rawHttp(address, rawGet(target)).answer;
      assert.ok(answer.status! >= 400 && answer.status! < 500, `${target}: ${answer.text}`);
    }
    const huge = await rawHttp(address, rawGet('/', `X-Big: ${'a'.repeat(100 * 1024)}\r\n`)).answer;
    assert.equal(huge.status, 431);
    assert.equal((await leader.get('/ready'))?.status, 200, 'answers while the slow client waits');
    const cut = await slow.answer;
    const slowMs = performance.now() - slowStartedMs;
    assert.equal(cut.status, 408, cut.text);
    assert.ok(slowMs < 10_000, `the slow client was cut off after ${Math.round(slowMs)} ms`);
    process.stdout.write(`# sidecar slow client cut off (408) after ${Math.round(slowMs)} ms\n`);
    assert.equal(leader.child.exitCode, null, 'the sidecar process is alive');
    assert.equal((await leader.get('/ready'))?.status, 200);
    const after = await readStoredRecord(admin, 'lease', election, cluster.namespace);
    assert.equal(after?.holderIdentity, leader.id, 'still the holder');
    assert.equal(after?.transitions, before?.transitions, 'the same term');
    await assertOnlyLeaderReady(leader);
  });

  test('POST /transfer is privileged: not on --http, loopback only, refused for a ghost or a bound above the ttl; to a live candidate the named sidecar leads at once', async () => {
    const old = leader;
    const target = live().find((s) => s !== old)!;
    const transferAddress = (await old.transferAddress())!;
    assert.match(transferAddress, /^127\.0\.0\.1:\d+$/);
    // Bound by address: another loopback address (standing in for the pod IP) reaches nothing.
    const elsewhere = await fetch(
      `http://${transferAddress.replace('127.0.0.1', '127.0.0.2')}/transfer`,
      {
        method: 'POST',
      },
    ).then(
      () => 'answered',
      (error: { cause?: { code?: string } }) => error.cause?.code,
    );
    assert.equal(elsewhere, 'ECONNREFUSED');
    const onStatusPort = await old.request(`/transfer?to=${target.id}`, 'POST');
    assert.equal(onStatusPort?.status, 404, JSON.stringify(onStatusPort?.body));
    const get = await fetch(`http://${transferAddress}/transfer`);
    assert.equal(get.status, 405);
    const onFollower = await target.transfer({ to: old.id });
    assert.equal(onFollower?.status, 409, JSON.stringify(onFollower?.body));
    assert.match(String(onFollower?.body.error), /not leading/);
    const ghost = await old.transfer({ to: 'ghost', leaseDurationSeconds: 2147483647 });
    assert.equal(ghost?.status, 409, JSON.stringify(ghost?.body));
    assert.match(String(ghost?.body.error), /"ghost" does not advertise itself/);
    for (const bad of [
      {},
      { to: old.id },
      { to: target.id, leaseDurationSeconds: 1.5 },
      { to: target.id, leaseDurationSeconds: TTL_SECONDS + 1 },
      { to: 'pod\nforged' },
    ]) {
      const refused = await old.transfer(bad);
      assert.equal(
        refused?.status,
        400,
        `${JSON.stringify(bad)}: ${JSON.stringify(refused?.body)}`,
      );
    }
    const fromPage = await old.transfer({ to: target.id }, { origin: 'http://evil.example' });
    assert.equal(fromPage?.status, 403);
    const before = await readStoredRecord(admin, 'lease', election, cluster.namespace);
    assert.equal(before?.holderIdentity, old.id, 'every refusal left the Lease alone');
    const orderedAt = performance.now();
    const answer = await old.transfer({ to: target.id });
    assert.equal(answer?.status, 200, JSON.stringify(answer?.body));
    assert.deepEqual(answer?.body, {
      to: target.id,
      // It accepted the offer: reserved for one offer window, 2 × retryPeriod (1 s) — not the ttl.
      leaseDurationSeconds: (2 * RETRY_MS) / 1000,
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

  test('the example (app + sidecar, shared emptyDir, least privilege) is valid for the API server', async () => {
    const file = join(repoRoot, 'packages/nest-leader-elector/deploy/sidecar-example.yaml');
    const objects = loadAllYaml(readFileSync(file, 'utf8')) as { kind: string }[];
    const applied = await applyManifests(admin, objects as never[], { dryRun: true });
    assert.deepEqual(
      applied.map((a) => a.kind),
      ['ServiceAccount', 'Role', 'RoleBinding', 'Deployment', 'NetworkPolicy'],
    );
    // get/update name the one Lease; create cannot be limited by name (a rule of its own).
    const role = objects.find((o) => o.kind === 'Role') as V1Role;
    assert.deepEqual(JSON.parse(JSON.stringify(role.rules)), [
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['billing-worker'],
        verbs: ['get', 'update'],
      },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    ]);
    const deployment = objects.find((o) => o.kind === 'Deployment') as V1Deployment;
    const pod = deployment.spec!.template.spec!;
    const [app, sidecar] = pod.containers;
    const mount = (c: typeof app) => c!.volumeMounts!.find((m) => m.name === 'leader-election')!;
    assert.equal(pod.volumes![0]!.emptyDir !== undefined, true);
    assert.equal(mount(app).mountPath, mount(sidecar).mountPath);
    assert.ok(sidecar!.args!.includes(`--leader-file=${mount(sidecar).mountPath}/is-leader`));
    // The app checks the file's expiry, not only that it exists.
    assert.match(app!.command!.join(' '), /expiresAtUnixSeconds/);
    assert.doesNotMatch(app!.command!.join(' '), /\[ -e \/leader-election\/is-leader \]/);
    // The token: not automounted; projected into the sidecar alone.
    assert.equal(pod.automountServiceAccountToken, false);
    const tokenVolume = pod.volumes!.find((v) =>
      v.projected?.sources?.some((s) => s.serviceAccountToken),
    );
    assert.ok(tokenVolume, 'a projected ServiceAccount token volume');
    const mounts = (c: typeof app) => (c!.volumeMounts ?? []).map((m) => m.name);
    assert.ok(mounts(sidecar).includes(tokenVolume.name));
    assert.ok(!mounts(app).includes(tokenVolume.name), 'the app container has no token');
    // Probes reach the read-only endpoints on the pod IP; transfers only on loopback.
    const args = parseSidecarArgs(
      sidecar!.args!.map((a) => a.replace(/\$\((\w+)\)/, 'x')),
      { hostname: 'h' },
    );
    assert.deepEqual(args.http, { host: '0.0.0.0', port: 4040 });
    assert.deepEqual(args.transferHttp, { host: '127.0.0.1', port: 4041 });
    // No other pod may connect (ingress: []) to the example's pods.
    const policy = objects.find((o) => o.kind === 'NetworkPolicy') as V1NetworkPolicy;
    assert.deepEqual(policy.spec!.podSelector!.matchLabels, deployment.spec!.selector.matchLabels);
    assert.deepEqual(policy.spec!.policyTypes, ['Ingress']);
    assert.deepEqual(policy.spec!.ingress, []);
  });
});
