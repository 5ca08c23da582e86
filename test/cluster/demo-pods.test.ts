/**
 * The cluster tier: the demo image in real pods on a real kubelet + containerd node, applied
 * from the repository's manifests (`apps/demo/deploy`, verbatim, with kustomize), and what the
 * kubelet does to it — probes, SIGTERM with the grace period, container restarts, a rollout,
 * evictions under the shipped PodDisruptionBudget, Service endpoints that follow readiness.
 *
 * Timings are the manifests' (the library's defaults: leaseDuration 15 s, renewDeadline 10 s,
 * retryPeriod 2 s). Measurements go to test/dist/cluster-results/*.jsonl and the log.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type {
  V1Deployment,
  V1EndpointSliceList,
  V1Lease,
  V1NetworkPolicy,
  V1Pod,
  V1PodDisruptionBudget,
  V1PodList,
  V1ValidatingAdmissionPolicyBinding,
} from '@kubernetes/client-node';
import {
  checkLeaderTerms,
  type LeaderWorkEvent,
  longestWorkGap,
} from '@nest-leader/demo/demo-events';
import { defaultNewerTemplateSettleSeconds } from 'nest-leader/core';
import { eventually } from '../support/eventually.js';
import { startNodeCluster, type NodeCluster } from '@nest-leader/demo/launcher/node-cluster';
import {
  ORDER_SHARDS,
  RECONCILE_INTERVAL_MS,
  SHARDED_ELECTION,
} from '@nest-leader/demo/demo.constants';
import { killContainer } from '../support/containerd.js';
import { repoRoot } from '../support/control-plane.js';
import { PodLogCollector } from '../support/pod-log-collector.js';
import {
  BAD_TEMPLATES,
  type BadTemplate,
  leaderWork,
  undoBadDeploy,
  badDeployWatch,
  watchBadDeploy,
} from '../support/bad-deploy.js';
import { DemoDeployment, type PodView } from '../support/demo-deployment.js';
import { ghostHandover, type GhostHandoverFigures } from '../support/ghost-handover.js';
import { advertisedCandidates } from '../support/pod-ghosts.js';
import { restartOldLeaderAfterNewPods } from '../support/rollout-wedge.js';
import {
  assertShardSafety,
  judgeShards,
  type ShardWindowFigures,
  waitForSettledShards,
} from '../support/demo-shards.js';

const ns = 'nest-leader-demo';
const selector = 'app.kubernetes.io/name=nest-leader-demo';
const leaseDurationMs = 15_000;
const retryPeriodMs = 2_000;
const renewDeadlineMs = 10_000;
/** The manifests leave newerTemplateSettleSeconds at the library's default. */
const newerTemplateSettleMs = defaultNewerTemplateSettleSeconds(leaseDurationMs / 1000) * 1000;
/** A released Lease is taken within a retry (watching followers act at once) plus slack. */
const gracefulBoundMs = 1.2 * retryPeriodMs + 3_000;
/**
 * A leader stopped while peers of its pod template stay (a deleted pod, an eviction) leads on
 * for half renewDeadline (`sameTemplateSettleMs`: slow withdrawals in a rollout are not taken
 * for staying peers) before it hands to one: time with a leader, counted here only because the
 * handover is timed from the delete.
 */
const plainStopBoundMs = renewDeadlineMs / 2 + gracefulBoundMs;
/** A crashed leader's Lease is taken once it expired, after at most a jittered retry. */
const crashBoundMs = leaseDurationMs + 2.2 * retryPeriodMs + 3_000;
/**
 * Leaderless time of a rollout: with preference the leader hands to the surge pod of the new
 * template (measured 0 s, bench); released instead, the Lease waits only for a new pod to
 * start (measured 4.9–9.1 s before preference, on this loaded 2-core machine). More than
 * leaseDuration means an expiry was waited out — a crash-like handover, the defect to catch.
 */
const rolloutLeaderlessBoundMs = leaseDurationMs;
/**
 * Label routing: from the new holder to the Service's EndpointSlice holding only its IP — the
 * new leader's label write, then the EndpointSlice controller (1.5 / 1.9 s measured on an
 * idle machine), seen through two polls of several kubectl calls each (the new holder's and
 * the routing's: up to 2.6 s a poll measured at load average 15–19). 4.1 s was measured so.
 */
const labelRoutingLagBoundMs = 8_000;
/**
 * The longest gap in leader-only work through a handover beside ghosts (issue 31): the same
 * as without — the ghosts' unanswered offers cost the stopping leader shutdown time while it
 * leads on, and the handover itself is a drain and one write (0.7–0.9 s measured).
 */
const ghostGapBoundMs = 2_000;
/**
 * Which bad templates `pnpm test` deploys. In CI, the one that guards the defect best: pods
 * that crash 3 s after they advertised leave a stale advertisement that outlives the settle
 * time, so they test both that a newer template is not yielded to before it has proven itself
 * and that a dead candidate is never handed the Lease; they also stall the Deployment as the
 * other two do (the old leader must stay Ready and routed, no gap in its work). The other two
 * make the same checks on failures the library has less to get wrong with — the unpullable
 * image's pods never run (nothing advertised), the never-healthy pods withdraw at each liveness
 * kill — plus, under label routing, that a never-healthy pod is never Ready (the kubelet's
 * readiness probe). They run in the long mode (`CLUSTER_LONG=1`, README: CI); `pnpm bench
 * bad-deploy` measures all three.
 */
const BAD_DEPLOY_KINDS: readonly BadTemplate[] = process.env.CLUSTER_LONG
  ? (Object.keys(BAD_TEMPLATES) as BadTemplate[])
  : ['pods that crash after they advertise'];
/**
 * Cases of the long mode only (`CLUSTER_LONG=1`): long, and checking what the long runs check
 * too — the ghost in a rollout (a rollout of a minute and more) is the long pod chaos runs'
 * rollout-stale-entry fault and `pnpm bench ghosts`' rollout; the short pod chaos run leaves
 * the rollouts out for the same reason. Reported as skipped, with this reason, in `pnpm test`.
 */
const LONG_MODE_ONLY = 'long mode only (CLUSTER_LONG=1; README: CI)';
/** The demo's sharded election's Lease (SHARD_LEASE_NAME's default: `<LEASE_NAME>-orders`). */
const shardLeaseName = `${ns}-${SHARDED_ELECTION}`;
/**
 * The longest a shard of `orders` may go without `shard-work` through a graceful move (a pod
 * deleted, a rollout): its last run before the move up to one reconcile interval earlier, the
 * move itself — the old owner drains (a run is synchronous: nothing to wait for) and
 * acknowledges, or releases its member Lease, and the coordinator grants on; if the stopping pod
 * coordinated, the next coordinator takes the released Lease first, within one released Lease's
 * bound ({@link gracefulBoundMs}: 1.2 × retryPeriod + 3 s slack, which also covers the two
 * writes and their watch deliveries) — then the new owner's next tick, one more interval.
 * Each move is its own gap; a shard moved twice in a rollout works in between.
 */
const shardGapBoundMs = 2 * RECONCILE_INTERVAL_MS + gracefulBoundMs;
/** A pod's boot under load (30–50 s measured) and its first shards: the election settles. */
const shardSettleTimeoutMs = 180_000;
const resultsDir = join(repoRoot, 'test/dist/cluster-results');

let cluster: NodeCluster;
let demo: DemoDeployment;
let logs: PodLogCollector;

async function readyEndpointIps(): Promise<string[]> {
  const slices = await cluster.getJson<V1EndpointSliceList>(
    'get',
    'endpointslices',
    '-n',
    ns,
    '-l',
    `kubernetes.io/service-name=${ns}`,
  );
  return slices.items
    .flatMap((slice) => slice.endpoints ?? [])
    .filter((e) => e.conditions?.ready)
    .flatMap((e) => e.addresses)
    .sort();
}

/**
 * What the manifests' comments promise while a leader holds the Lease: exactly one live pod
 * leads, it is the only Ready pod, the Service's EndpointSlice holds its IP alone, and its
 * role label says so (the standbys' say standby).
 */
async function assertRoutedToLeader(timeoutMs = 20_000): Promise<PodView> {
  return routing === 'readiness'
    ? assertReadinessRouting(timeoutMs)
    : assertLabelRouting(timeoutMs);
}

/** Which manifests are applied: leader-only readiness (apps/demo/deploy) or label routing. */
let routing = 'readiness' as 'readiness' | 'label';

/**
 * apps/demo/deploy-label-routing: every live pod Ready, and the Service (selecting the role
 * label) has exactly the leader's IP.
 */
async function assertLabelRouting(timeoutMs: number): Promise<PodView> {
  return eventually(
    async () => {
      const { holderIdentity } = await demo.leaseSpec();
      const live = (await demo.pods()).filter((p) => !p.terminating);
      const leader = live.find((p) => p.name === holderIdentity);
      assert.ok(leader, `the holder ${JSON.stringify(holderIdentity)} is a live pod`);
      assert.ok(
        live.every((p) => p.ready),
        'every live pod is Ready (readiness = /healthz)',
      );
      assert.deepEqual(
        await readyEndpointIps(),
        [leader.ip],
        "the Service's EndpointSlice holds the leader's IP alone",
      );
      return leader;
    },
    { timeoutMs, intervalMs: 250 },
  );
}

async function assertReadinessRouting(timeoutMs: number): Promise<PodView> {
  return eventually(
    async () => {
      const { holderIdentity } = await demo.leaseSpec();
      const live = (await demo.pods()).filter((p) => !p.terminating);
      const leader = live.find((p) => p.name === holderIdentity);
      assert.ok(
        leader,
        `the holder ${JSON.stringify(holderIdentity)} is one of the live pods ${live.map((p) => p.name)}`,
      );
      assert.deepEqual(
        live.filter((p) => p.ready).map((p) => p.name),
        [leader.name],
        'only the leader is Ready (/readyz is leader-only)',
      );
      assert.deepEqual(
        await readyEndpointIps(),
        [leader.ip],
        "the Service's EndpointSlice holds the leader's IP alone",
      );
      assert.equal(leader.role, 'leader');
      for (const standby of live.filter((p) => p !== leader))
        assert.equal(standby.role, 'standby', standby.name);
      return leader;
    },
    { timeoutMs, intervalMs: 250 },
  );
}

/** Waits until the Lease names a live pod other than `previous`; returns the time it took. */
async function waitForNewLeader(
  previous: string,
  sinceMs: number,
  timeoutMs: number,
): Promise<{ leader: string; ms: number }> {
  return eventually(
    async () => {
      const { holderIdentity } = await demo.leaseSpec();
      const live = (await demo.pods()).filter((p) => !p.terminating).map((p) => p.name);
      assert.ok(
        holderIdentity !== previous && live.includes(holderIdentity),
        `new leader, not ${previous}`,
      );
      return { leader: holderIdentity, ms: Math.round(performance.now() - sinceMs) };
    },
    { timeoutMs, intervalMs: 50 },
  );
}

function record(name: string, figures: Record<string, unknown>): void {
  mkdirSync(resultsDir, { recursive: true });
  appendFileSync(
    join(resultsDir, `${name}.jsonl`),
    `${JSON.stringify({ at: new Date().toISOString(), ...figures })}\n`,
  );
  console.log(`# ${name}: ${JSON.stringify(figures)}`);
}

/**
 * After a graceful disruption from `fromMs`: the shards settle again over the live pods, no
 * shard went without work longer than {@link shardGapBoundMs}, 0 overlapping shard terms,
 * tokens increasing per shard; `minMoves` shards (at least) changed pods.
 */
async function assertShardsMovedGracefully(
  name: string,
  fromMs: number,
  minMoves: number,
): Promise<ShardWindowFigures> {
  const settled = await waitForSettledShards(demo, logs, shardLeaseName, shardSettleTimeoutMs);
  const figures = judgeShards(logs, fromMs, Date.now());
  record(name, {
    ...settled,
    longestShardGapMs: figures.longestGapMs,
    longestGapShard: figures.longestGapShard,
    moves: figures.moves,
    overlaps: figures.overlaps.length,
    shardWorkLines: figures.workLines,
    boundMs: shardGapBoundMs,
  });
  assertShardSafety(figures);
  assert.ok(figures.moves >= minMoves, `${figures.moves} shards moved (at least ${minMoves})`);
  assert.ok(
    figures.longestGapMs <= shardGapBoundMs,
    `shard ${figures.longestGapShard} went ${figures.longestGapMs} ms without shard-work (bound ${shardGapBoundMs} ms)`,
  );
  return figures;
}

function assertNoOverlappingWork(): void {
  const work = logs.json<LeaderWorkEvent>().filter((e) => e.event === 'leader-work');
  assert.ok(work.length > 0, 'the leaders did leader-only work');
  const { violations } = checkLeaderTerms(work);
  assert.deepEqual(violations, [], 'no two pods worked one term, no terms overlapped');
}

/**
 * What issue 31 asks of a handover beside ghosts: no ghost was handed the Lease, the longest
 * gap in leader-only work stayed within {@link ghostGapBoundMs}, and the ghosts are gone from
 * the advertisements (each removed after its unanswered offer).
 */
async function assertGhostsPassedOver(figures: GhostHandoverFigures): Promise<void> {
  assert.ok(figures.ghosts.length > 0, 'ghosts were left');
  assert.ok(!figures.handedToGhost, `no ghost held the Lease: ${JSON.stringify(figures)}`);
  assert.ok(
    figures.longestGapMs <= ghostGapBoundMs,
    `leader-only work stopped for ${figures.longestGapMs} ms (${figures.gapFrom} to ${figures.gapTo}, bound ${ghostGapBoundMs} ms)`,
  );
  await eventually(
    async () => {
      const names = (await advertisedCandidates(demo)).map((c) => c.identity);
      assert.deepEqual(
        figures.ghosts.filter((ghost) => names.includes(ghost)),
        [],
        'no ghost is advertised any more',
      );
    },
    { timeoutMs: 10_000, intervalMs: 500 },
  );
}

describe(
  'the demo in real pods on a real node (apps/demo/deploy, verbatim)',
  { timeout: 30 * 60_000 },
  () => {
    before(async () => {
      cluster = await startNodeCluster();
      demo = new DemoDeployment(cluster, ns, selector, 'demo');
      await cluster.kubectl('apply', '-k', join(repoRoot, 'apps/demo/deploy'));
      logs = new PodLogCollector(demo);
      await eventually(
        async () => {
          const live = await demo.pods();
          assert.equal(live.filter((p) => !p.terminating && p.containerId).length, 3);
        },
        { timeoutMs: 180_000, intervalMs: 500 },
      );
    });

    after(async () => {
      await logs?.stop();
      await cluster?.stop();
    });

    it('three pods elect one leader whose identity is its pod name, through in-cluster credentials', async () => {
      const leader = await assertRoutedToLeader(60_000);
      const deployment = await cluster.getJson<V1Deployment>('get', 'deployment', ns, '-n', ns);
      const env = deployment.spec!.template.spec!.containers[0]!.env!.map((e) => e.name);
      assert.ok(
        !env.includes('KUBECONFIG'),
        'no kubeconfig in the pod: the in-cluster credentials are used',
      );
      await eventually(
        () => {
          const started = logs
            .json<{ event: string; identity: string }>()
            .filter((e) => e.event === 'replica-started');
          assert.equal(
            new Set(started.map((e) => e.pod)).size,
            3,
            'every pod logged replica-started',
          );
          for (const e of started)
            assert.equal(e.identity, e.pod, 'the identity is the pod name (downward API)');
        },
        { timeoutMs: 30_000 },
      );
      await eventually(
        () =>
          assert.ok(
            logs
              .json<LeaderWorkEvent>()
              .some((e) => e.event === 'leader-work' && e.identity === leader.name),
          ),
        {
          timeoutMs: 30_000,
        },
      );
      // The sharded election runs on the Lease: 16 shards, 5 or 6 per pod, each owned once.
      const started = logs
        .json<{ event: string; shards?: number }>()
        .filter((e) => e.event === 'replica-started');
      assert.ok(
        started.every((e) => e.shards === ORDER_SHARDS),
        'every pod runs the shards',
      );
      const settled = await waitForSettledShards(demo, logs, shardLeaseName, shardSettleTimeoutMs);
      record('shards-first-election', { ...settled });
      assert.deepEqual(Object.values(settled.perPod).sort(), [5, 5, 6]);
      assertShardSafety(judgeShards(logs, 0, Date.now()));
      // Each pod read its own creationTimestamp (RBAC get on pods) and advertises it: what
      // dates its template when a container restarts during a rollout (seed 3344).
      const pods = await demo.livePods();
      const advertised = await advertisedCandidates(demo);
      assert.deepEqual(
        Object.fromEntries(
          advertised.map((c) => [c.identity, c.podCreationTimestamp?.toISOString()]),
        ),
        Object.fromEntries(pods.map((p) => [p.name, p.createdAt])),
        'every pod advertises its creationTimestamp',
      );
    });

    it("least privilege: the NetworkPolicy and the admission policy are in force with the manifests; the demo's ServiceAccount may patch only role labels and pod-deletion-cost", async () => {
      await assertRoutedToLeader(60_000); // elected, and every pod labelled
      // The NetworkPolicy is stored (admitted) and selects the demo's pods. The node's bridge
      // CNI does not enforce NetworkPolicy: nothing here claims it drops traffic.
      const policy = await cluster.getJson<V1NetworkPolicy>('get', 'networkpolicy', ns, '-n', ns);
      assert.deepEqual(policy.spec?.podSelector?.matchLabels, { 'app.kubernetes.io/name': ns });
      const vap = 'nest-leader-demo-pod-role-labels-only';
      const binding = await cluster.getJson<V1ValidatingAdmissionPolicyBinding>(
        'get',
        'validatingadmissionpolicybinding',
        vap,
      );
      assert.equal(binding.spec?.policyName, vap);
      // RBAC alone lets the ServiceAccount patch any Pod of the namespace…
      const account = `system:serviceaccount:${ns}:nest-leader-demo`;
      assert.equal(
        (
          await cluster.kubectl('auth', 'can-i', 'patch', 'pods', '-n', ns, `--as=${account}`)
        ).trim(),
        'yes',
      );
      // …the admission policy narrows it. A replica patches its own Pod with its own token
      // (kubectl --as cannot: kubectl patch reads the Pod first, and the account may not get).
      const standby = (await demo.pods()).find((p) => !p.terminating && p.role === 'standby')!;
      // Each patch in turn: its role label; the pod-deletion-cost annotation set (0, the
      // default cost) and removed again, as the leader's observer writes it; another label; and
      // another annotation.
      const cost = 'controller.kubernetes.io/pod-deletion-cost';
      const patches = {
        role: { labels: { 'nest-leader/role': 'standby' } },
        cost: { annotations: { [cost]: '0' } },
        costRemoved: { annotations: { [cost]: null } },
        other: { labels: { 'example.com/probe': 'x' } },
        otherAnnotation: { annotations: { 'example.com/probe': 'x' } },
      };
      const script =
        "const fs=require('fs'),https=require('https'),d='/var/run/secrets/kubernetes.io/serviceaccount/';" +
        'const patch=(metadata)=>new Promise((ok,ko)=>{const r=https.request({host:process.env.KUBERNETES_SERVICE_HOST,' +
        "port:process.env.KUBERNETES_SERVICE_PORT,method:'PATCH',path:'/api/v1/namespaces/'+process.env.POD_NAMESPACE+" +
        "'/pods/'+process.env.POD_NAME,ca:fs.readFileSync(d+'ca.crt'),headers:{authorization:'Bearer '+" +
        "fs.readFileSync(d+'token','utf8').trim(),'content-type':'application/merge-patch+json'}},(s)=>{let b='';" +
        "s.on('data',(c)=>b+=c);s.on('end',()=>ok({status:s.statusCode,message:JSON.parse(b).message}))});" +
        "r.on('error',ko);r.end(JSON.stringify({metadata}))});" +
        `(async()=>{const out={};for(const[k,m]of Object.entries(${JSON.stringify(patches)}))out[k]=await patch(m);` +
        'console.log(JSON.stringify(out))})();';
      const out = await cluster.kubectl(
        'exec',
        '-n',
        ns,
        standby.name,
        '-c',
        'demo',
        '--',
        'node',
        '-e',
        script,
      );
      const answers = JSON.parse(out.trim().split('\n').at(-1)!) as Record<
        keyof typeof patches,
        { status: number; message?: string }
      >;
      const { role, other, otherAnnotation } = answers;
      assert.equal(role.status, 200, `its role-label patch is allowed: ${role.message}`);
      assert.equal(
        answers.cost.status,
        200,
        `pod-deletion-cost is allowed: ${answers.cost.message}`,
      );
      assert.equal(
        answers.costRemoved.status,
        200,
        `and its removal: ${answers.costRemoved.message}`,
      );
      assert.equal(other.status, 403, 'another label is refused');
      assert.match(
        other.message!,
        /ValidatingAdmissionPolicy 'nest-leader-demo-pod-role-labels-only' .*denied request: the demo's ServiceAccount may change only the nest-leader\/role\* labels of a Pod/,
      );
      assert.equal(otherAnnotation.status, 403, 'another annotation is refused');
      assert.match(
        otherAnnotation.message!,
        /denied request: the demo's ServiceAccount may change only the controller\.kubernetes\.io\/pod-deletion-cost annotation of a Pod/,
      );
      const after = await cluster.getJson<{
        metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      }>('get', 'pod', standby.name, '-n', ns);
      assert.equal(after.metadata.labels['example.com/probe'], undefined);
      assert.equal(after.metadata.annotations?.['example.com/probe'], undefined);
      assert.equal(after.metadata.annotations?.[cost], undefined, 'the standby has no cost again');
    });

    it('kubectl delete pod <leader>: it drains and releases, another pod leads within the graceful bound; its shards move without a gap beyond the bound', async () => {
      const before = await assertRoutedToLeader();
      const { perPod } = await waitForSettledShards(demo, logs, shardLeaseName, 60_000);
      const fromMs = Date.now();
      const t0 = performance.now();
      await cluster.kubectl('delete', 'pod', before.name, '-n', ns, '--wait=false');
      const { leader, ms } = await waitForNewLeader(before.name, t0, 60_000);
      await eventually(
        () =>
          assert.ok(
            logs
              .json<{ event: string; pod: string }>()
              .some((e) => e.event === 'replica-stopped' && e.pod === before.name),
            'the old leader logged replica-stopped (drained, released)',
          ),
        { timeoutMs: 30_000 },
      );
      record('delete-leader-pod', {
        from: before.name,
        to: leader,
        handoverMs: ms,
        boundMs: plainStopBoundMs,
      });
      assert.ok(ms <= plainStopBoundMs, `handover took ${ms} ms (bound ${plainStopBoundMs} ms)`);
      await assertRoutedToLeader(30_000);
      assertNoOverlappingWork();
      // Its shards went to the other pods; the replacement pod then took its share.
      await assertShardsMovedGracefully('shards-delete-leader-pod', fromMs, perPod[before.name]!);
    });

    it('a follower killed through the runtime and force-deleted stays advertised; kubectl delete pod <leader>: the leader-work gap stays within 2 s, the ghost is removed', async () => {
      await assertRoutedToLeader();
      const figures = await ghostHandover(demo, logs, 'graceful deletion', 1);
      record('ghost-then-delete-leader', { ...figures, boundMs: ghostGapBoundMs });
      await assertGhostsPassedOver(figures);
      await assertRoutedToLeader(30_000);
      assertNoOverlappingWork();
    });

    it('the leader container SIGKILLed by the runtime: restarted by the kubelet, another pod leads within the crash bound', async () => {
      const before = await assertRoutedToLeader();
      assert.ok(before.containerId);
      const t0 = performance.now();
      await killContainer(cluster, before.containerId);
      const { leader, ms } = await waitForNewLeader(before.name, t0, crashBoundMs + 30_000);
      record('sigkill-leader-container', {
        from: before.name,
        to: leader,
        failoverMs: ms,
        boundMs: crashBoundMs,
      });
      assert.ok(ms <= crashBoundMs, `failover took ${ms} ms (bound ${crashBoundMs} ms)`);
      const restarted = await eventually(
        async () => {
          const pod = (await demo.pods()).find((p) => p.name === before.name);
          assert.ok(
            pod && pod.restarts === before.restarts + 1 && pod.containerId !== before.containerId,
            'restarted',
          );
          assert.equal(pod.role, 'standby');
          return pod;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      assert.equal(restarted.ready, false, 'the restarted container rejoined as a follower');
      await assertRoutedToLeader();
      assertNoOverlappingWork();
    });

    it('evictions with the shipped PodDisruptionBudget: standbys and the leader can be evicted; evicting the leader hands over', async () => {
      const leader = await assertRoutedToLeader();
      const pdb = await cluster.getJson<V1PodDisruptionBudget>('get', 'pdb', ns, '-n', ns);
      assert.equal(
        pdb.status!.currentHealthy,
        1,
        'only the leader counts as healthy (leader-only readiness)',
      );
      assert.equal(pdb.status!.desiredHealthy, 0);
      const standby = (await demo.pods()).find((p) => !p.terminating && p.name !== leader.name)!;
      await evict(standby.name);
      await evict(leader.name);
      const t0 = performance.now();
      const { ms } = await waitForNewLeader(leader.name, t0, 60_000);
      record('evict-leader', { from: leader.name, handoverMs: ms });
      assert.ok(ms <= plainStopBoundMs, `handover after eviction took ${ms} ms`);
      await assertRoutedToLeader(60_000);
      assertNoOverlappingWork();
    });

    it("lock: 'auto' in a pod picks the Lease through the in-cluster credentials (no kubeconfig, no file lock)", async () => {
      // The manifests pin LEADER_LOCK=kubernetes (a pod without a token fails loudly); the
      // library's default, 'auto', must find the same in-cluster configuration on its own.
      await setEnvOnce(ENV_AFTER_FIRST_CASES);
      const live = (await demo.pods()).filter((p) => !p.terminating).map((p) => p.name);
      const leader = await assertRoutedToLeader(60_000);
      assert.ok(live.includes(leader.name), 'a pod of the rollout holds the Lease');
      await eventually(
        () => {
          const started = logs
            .json<{ event: string; pod: string; lock: string }>()
            .filter((e) => e.event === 'replica-started' && live.includes(e.pod));
          assert.equal(started.length, 3, 'every new pod logged replica-started');
          for (const e of started) assert.equal(e.lock, 'auto', `${e.pod} runs with lock 'auto'`);
        },
        { timeoutMs: 30_000 },
      );
      const before = (await demo.leaseSpec()).renewTime;
      await eventually(
        async () =>
          assert.notEqual((await demo.leaseSpec()).renewTime, before, 'the Lease is renewed'),
        { timeoutMs: 10_000, intervalMs: 500 },
      );
      assertNoOverlappingWork();
    });

    it('a wedged leader (event loop blocked past the liveness budget) is restarted by the liveness probe', async () => {
      // The debug hook is off in the manifests; turning it on is a rollout, the same one as the
      // case before's (a no-op when that case ran).
      await setEnvOnce(ENV_AFTER_FIRST_CASES);
      const wedged = await assertRoutedToLeader(60_000);
      // The debug route answers on loopback only: the same pod asking by its own pod IP (as
      // another pod or the Service would reach it) is refused.
      const byPodIp = await cluster.kubectl(
        'exec',
        '-n',
        ns,
        wedged.name,
        '-c',
        'demo',
        '--',
        'node',
        '-e',
        `fetch('http://${wedged.ip}:3000/debug/block-event-loop?ms=1',{method:'POST'}).then(r=>console.log(r.status))`,
      );
      assert.equal(byPodIp.trim(), '403', 'POST /debug/… by the pod IP: 403');
      // Blocked just past what the liveness probe needs to see it fail, read from the applied
      // Deployment (see livenessWedge): a block that ended first would not be restarted.
      const { wedgeMs, restartCapMs } = livenessWedge(await demo.deployment());
      await cluster.kubectl(
        'exec',
        '-n',
        ns,
        wedged.name,
        '-c',
        'demo',
        '--',
        'node',
        '-e',
        `fetch('http://127.0.0.1:3000/debug/block-event-loop?ms=${wedgeMs}',{method:'POST'}).then(r=>process.exit(r.status===202?0:1))`,
      );
      const t0 = performance.now();
      const { leader, ms } = await waitForNewLeader(wedged.name, t0, crashBoundMs + 30_000);
      const restartedAfterMs = await eventually(
        async () => {
          const pod = (await demo.pods()).find((p) => p.name === wedged.name);
          assert.ok(
            pod && pod.restarts === wedged.restarts + 1,
            'the kubelet restarted the wedged container',
          );
          return Math.round(performance.now() - t0);
        },
        { timeoutMs: restartCapMs, intervalMs: 500 },
      );
      record('wedged-leader', {
        wedged: wedged.name,
        newLeader: leader,
        failoverMs: ms,
        restartedAfterMs,
        wedgeMs,
      });
      assert.ok(ms <= crashBoundMs, `failover from the wedged leader took ${ms} ms`);
      await assertRoutedToLeader(60_000);
      assertNoOverlappingWork();
    });

    for (const kind of BAD_DEPLOY_KINDS) {
      it(`bad deploy (leader-only readiness), ${kind}: the old leader keeps leading and Ready, no gap in its work; rollout undo`, async () => {
        await badDeploy(kind);
      });
    }

    it('after the bad deploys (leader-only readiness): kubectl rollout restart is one handover within progressDeadlineSeconds, no gap beyond it', async () => {
      await goodRolloutIsOneHandover();
    });

    it('a rollout during which a new pod is killed through the runtime after it advertised and force-deleted: the old leader does not hand to it; the leader-work gap stays within 2 s, one transition', async (t) => {
      if (!process.env.CLUSTER_LONG) return t.skip(LONG_MODE_ONLY);
      await assertRoutedToLeader();
      const oldPods = new Set((await demo.pods()).map((p) => p.name));
      const figures = await ghostHandover(demo, logs, 'rollout', 1);
      record('ghost-rollout', { ...figures, boundMs: ghostGapBoundMs });
      assert.ok(!oldPods.has(figures.to), `a new pod leads: ${figures.to}`);
      assert.equal(figures.transitions, 1, `one handover: ${JSON.stringify(figures)}`);
      await assertGhostsPassedOver(figures);
      await eventually(async () => assert.ok(await demo.rolloutDone()), {
        timeoutMs: 180_000,
        intervalMs: 500,
      });
      const leader = await assertRoutedToLeader(30_000);
      assert.equal(leader.name, figures.to, 'the rollout ended with the pod handed to');
      assertNoOverlappingWork();
    });

    it("a rollout during which the old leader's container restarts after the first new pod started and takes the Lease over (pod chaos seed 3344's wedge, test/support/rollout-wedge.ts): dated by its pod, the old template is older, the leader yields, and the rollout ends with a new pod leading", async (t) => {
      if (!process.env.CLUSTER_LONG) return t.skip(LONG_MODE_ONLY);
      const leader = await assertRoutedToLeader(30_000);
      const oldPods = new Set((await demo.pods()).map((p) => p.name));
      const { leaseTransitions } = await demo.leaseSpec();
      const t0 = performance.now();
      await cluster.kubectl('rollout', 'restart', `deployment/${ns}`, '-n', ns);
      const { killAt, holder } = await restartOldLeaderAfterNewPods(
        demo,
        leader,
        oldPods,
        leaseTransitions,
        90_000,
      );
      assert.equal(holder, leader.name, 'the restarted container took the Lease over');
      const advertised = await advertisedCandidates(demo);
      const restarted = advertised.find((c) => c.identity === leader.name);
      const newPods = advertised.filter((c) => !oldPods.has(c.identity));
      assert.ok(restarted && restarted.startedAt.getTime() > killAt, 'it advertised again');
      const firstNewStartMs = Math.min(...newPods.map((c) => c.startedAt.getTime()));
      assert.ok(
        restarted.startedAt.getTime() > firstNewStartMs,
        "seed 3344's ordering: it started after the new template's first pod",
      );
      const pod = (await demo.pods()).find((p) => p.name === leader.name);
      assert.equal(
        restarted.podCreationTimestamp?.toISOString(),
        pod?.createdAt,
        "it advertises its pod's creation, before the new pods'",
      );
      await eventually(async () => assert.ok(await demo.rolloutDone()), {
        timeoutMs: 240_000,
        intervalMs: 1_000,
      });
      const rolloutMs = Math.round(performance.now() - t0);
      // The new pods were held off the API server as they started: their first role-label
      // PATCH failed, and landed at a retry (PodRoleLabelObserver), so they are labelled too.
      const after = await assertRoutedToLeader(30_000);
      record('rollout-restarted-old-leader', {
        oldLeader: leader.name,
        restartedAfterFirstNewPodMs: restarted.startedAt.getTime() - firstNewStartMs,
        leader: after.name,
        rolloutMs,
      });
      assert.ok(!oldPods.has(after.name), `a new pod leads: ${after.name}`);
      assertNoOverlappingWork();
    });

    it('label routing (apps/demo/deploy-label-routing): the Service holds exactly the leader after a handover', async () => {
      await cluster.kubectl('apply', '-k', join(repoRoot, 'apps/demo/deploy-label-routing'));
      routing = 'label';
      await eventually(async () => assert.ok(await demo.rolloutDone()), {
        timeoutMs: 180_000,
        intervalMs: 500,
      });
      const before = await assertRoutedToLeader(60_000);
      const t0 = performance.now();
      await cluster.kubectl('delete', 'pod', before.name, '-n', ns, '--wait=false');
      const { ms } = await waitForNewLeader(before.name, t0, 60_000);
      const routed = await assertRoutedToLeader(30_000);
      const endpointFollowedMs = Math.round(performance.now() - t0);
      record('delete-leader-pod', {
        variant: 'label routing',
        from: before.name,
        to: routed.name,
        handoverMs: ms,
        endpointFollowedMs,
        boundMs: plainStopBoundMs,
        lagBoundMs: labelRoutingLagBoundMs,
      });
      assert.ok(ms <= plainStopBoundMs, `handover took ${ms} ms (bound ${plainStopBoundMs} ms)`);
      assert.ok(
        endpointFollowedMs - ms <= labelRoutingLagBoundMs,
        `the EndpointSlice followed the new holder after ${endpointFollowedMs - ms} ms (bound ${labelRoutingLagBoundMs} ms)`,
      );
    });

    for (const kind of BAD_DEPLOY_KINDS) {
      it(`bad deploy (label routing), ${kind}: the old leader keeps leading and routed, no gap in its work; rollout undo`, async () => {
        await badDeploy(kind);
      });
    }

    it('after the bad deploys (label routing): kubectl rollout restart is one handover within progressDeadlineSeconds, no gap beyond it; the Service follows', async () => {
      await goodRolloutIsOneHandover();
    });

    it("the sidecar example (packages/nest-leader-elector/deploy): every pod's GET / names the Lease's holder; deleting its pod moves it", async () => {
      await cluster.kubectl(
        'apply',
        '-f',
        join(repoRoot, 'packages/nest-leader-elector/deploy/sidecar-example.yaml'),
      );
      const sidecarPods = async () =>
        (
          await cluster.getJson<V1PodList>(
            'get',
            'pods',
            '-n',
            'default',
            '-l',
            'app.kubernetes.io/name=billing-worker',
          )
        ).items
          .filter(
            (p) =>
              !p.metadata!.deletionTimestamp && p.status?.containerStatuses?.every((c) => c.ready),
          )
          .map((p) => p.metadata!.name!);
      /** Every running pod's sidecar, asked GET / through the API server's pod proxy. */
      const agreedLeader = () =>
        eventually(
          async () => {
            const names = await sidecarPods();
            assert.equal(names.length, 3, 'three pods with both containers ready');
            const holder = (
              await cluster.getJson<V1Lease>('get', 'lease', 'billing-worker', '-n', 'default')
            ).spec?.holderIdentity;
            for (const pod of names) {
              const answer = JSON.parse(
                await cluster.kubectl(
                  'get',
                  '--raw',
                  `/api/v1/namespaces/default/pods/${pod}:4040/proxy/`,
                ),
              ) as { name: string };
              assert.equal(answer.name, holder, `${pod}'s sidecar names the holder`);
            }
            assert.ok(holder && names.includes(holder));
            return holder;
          },
          { timeoutMs: 120_000, intervalMs: 500 },
        );
      const first = await agreedLeader();
      // Least privilege as applied: the NetworkPolicy was admitted (this node's bridge plugin
      // does not enforce it), the app container has no ServiceAccount token, and the transfer
      // address listens on the pod's loopback only — the API server's pod proxy, a client
      // outside the pod, reaches 4040 but not 4041.
      await cluster.kubectl('get', 'networkpolicy', 'billing-worker', '-n', 'default');
      const leaderPod = await cluster.getJson<V1Pod>('get', 'pod', first, '-n', 'default');
      const app = leaderPod.spec!.containers.find((c) => c.name === 'app')!;
      assert.ok(
        !(app.volumeMounts ?? []).some((m) => m.mountPath.startsWith('/var/run/secrets')),
        `the app container mounts no token: ${JSON.stringify(app.volumeMounts)}`,
      );
      const transferFromOutside = await cluster
        .kubectl('get', '--raw', `/api/v1/namespaces/default/pods/${first}:4041/proxy/transfer`)
        .then(
          (text) => `answered: ${text}`,
          () => 'unreachable',
        );
      assert.equal(transferFromOutside, 'unreachable');
      // The app container's shell believes the leader file only on the leader (expiry checked).
      await eventually(
        async () => {
          const log = await cluster.kubectl('logs', first, '-c', 'app', '-n', 'default');
          assert.match(log, /leader: doing the singleton work/);
        },
        { timeoutMs: 30_000, intervalMs: 1_000 },
      );
      await cluster.kubectl('delete', 'pod', first, '-n', 'default', '--wait=false');
      const second = await eventually(
        async () => {
          const next = await agreedLeader();
          assert.notEqual(next, first, 'leadership moved off the deleted pod');
          return next;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      record('sidecar-example', { from: first, to: second });
    });
  },
);

/** POST an Eviction for `pod` (policy/v1), as `kubectl drain` does; fails if refused. */
async function evict(pod: string): Promise<void> {
  const body = JSON.stringify({
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: pod, namespace: ns },
  });
  const file = join(mkdtempSync(join(tmpdir(), 'eviction-')), 'eviction.json');
  writeFileSync(file, body);
  await cluster.kubectl(
    'create',
    '--raw',
    `/api/v1/namespaces/${ns}/pods/${pod}/eviction`,
    '-f',
    file,
  );
}

/**
 * The env both `lock: 'auto'` and the wedged-leader case need, set in one rollout (each rollout
 * of three pods costs about a minute here: settle time, minReadySeconds): the library's default
 * lock, and the debug hook that blocks the event loop.
 */
const ENV_AFTER_FIRST_CASES = { LEADER_LOCK: 'auto', DEMO_DEBUG_HOOKS: '1' };

/**
 * `kubectl set env` with `env` and waits for the rollout, unless the Deployment's template has
 * it already (then nothing changes: no rollout).
 */
async function setEnvOnce(env: Record<string, string>): Promise<void> {
  const container = (await demo.deployment()).spec!.template.spec!.containers[0]!;
  const has = new Map((container.env ?? []).map((e) => [e.name, e.value]));
  const missing = Object.entries(env).filter(([name, value]) => has.get(name) !== value);
  if (missing.length === 0) return;
  const pairs = missing.map(([name, value]) => `${name}=${value}`);
  await cluster.kubectl('set', 'env', `deployment/${ns}`, '-n', ns, ...pairs);
  await eventually(async () => assert.ok(await demo.rolloutDone()), {
    timeoutMs: 180_000,
    intervalMs: 500,
  });
}

/**
 * How long to block a pod's event loop so that its liveness probe (read from `deployment`)
 * fails it, and how long to wait for the restart. The kubelet kills after failureThreshold
 * failed probes, periodSeconds apart, the last one timing out after timeoutSeconds: the budget
 * (3 × 10 s + 2 s = 32 s with the manifests). The first failing probe comes up to a period
 * after the block starts, and a busy node's kubelet probes late: one period for the first, two
 * as margin — 62 s, where a fixed 90 s was used before. The kill's
 * SIGTERM is handled when the block ends; the kubelet SIGKILLs after the grace period at the
 * latest: the restart is due within the block plus terminationGracePeriodSeconds.
 */
function livenessWedge(deployment: V1Deployment): { wedgeMs: number; restartCapMs: number } {
  const pod = deployment.spec!.template.spec!;
  const probe = pod.containers[0]!.livenessProbe!;
  const periodMs = (probe.periodSeconds ?? 10) * 1000;
  const budgetMs = periodMs * (probe.failureThreshold ?? 3) + (probe.timeoutSeconds ?? 1) * 1000;
  const wedgeMs = budgetMs + 3 * periodMs;
  return { wedgeMs, restartCapMs: wedgeMs + (pod.terminationGracePeriodSeconds ?? 30) * 1000 };
}

/** The longest time without leader-only work a bad deploy may cost: none beyond the beat. */
const BAD_DEPLOY_GAP_BOUND_MS = 2_000;

/**
 * A good rollout (`kubectl rollout restart`, after the bad deploys, so a template backoff or a
 * stale advertisement they left would show): done within progressDeadlineSeconds, exactly one
 * handover — the old leader to a new pod —, leaderless time within its bound, no leader-work
 * gap beyond one handover's; then the new leader alone is routed. The tier's one rollout per
 * variant.
 */
async function goodRolloutIsOneHandover(): Promise<void> {
  const variant = routing === 'readiness' ? 'leader-only readiness' : 'label routing';
  const leader = await assertRoutedToLeader(30_000);
  await waitForSettledShards(demo, logs, shardLeaseName, shardSettleTimeoutMs);
  const oldPods = new Set((await demo.pods()).map((p) => p.name));
  const fromMs = Date.now();
  const { progressDeadlineMs, ...figures } = await demo.rolloutRestart();
  const gap = longestWorkGap(leaderWork(logs), fromMs, Date.now());
  record('good-rollout-after-bad-deploys', { variant, ...figures, longestWorkGapMs: gap.gapMs });
  assert.ok(figures.elapsedMs < progressDeadlineMs, `rollout took ${figures.elapsedMs} ms`);
  // The figures below are only as good as the watch's reads of the Lease.
  assert.ok(figures.samples >= 5, `${figures.samples} samples of the Lease during the rollout`);
  assert.equal(figures.transitions, 1, `one handover per rollout: ${JSON.stringify(figures)}`);
  assert.deepEqual(figures.holders.slice(0, 1), [leader.name]);
  assert.ok(
    figures.leaderlessMs <= rolloutLeaderlessBoundMs,
    `leaderless ${figures.leaderlessMs} ms (bound ${rolloutLeaderlessBoundMs} ms): ${JSON.stringify(figures)}`,
  );
  assert.ok(
    gap.gapMs <= gracefulBoundMs,
    `longest leader-work gap ${gap.gapMs} ms (one handover's bound ${gracefulBoundMs} ms)`,
  );
  const next = await assertRoutedToLeader(30_000);
  assert.ok(!oldPods.has(next.name), 'a new pod leads');
  assertNoOverlappingWork();
  // Every shard left the old pods (all replaced), each move graceful.
  await assertShardsMovedGracefully(`shards-rollout-${routing}`, fromMs, ORDER_SHARDS);
}

/**
 * One bad deploy (`watchBadDeploy`), watched as `badDeployWatch` says for its kind:
 * the leader must not change, must stay Ready and routed, and leader-only work must not pause
 * beyond {@link BAD_DEPLOY_GAP_BOUND_MS} (from the pods' own leader-work lines). Then `kubectl rollout undo` to the good revision: still the same leader, no gap.
 */
async function badDeploy(kind: BadTemplate): Promise<void> {
  const variant = routing === 'readiness' ? 'leader-only readiness' : 'label routing';
  const leader = await assertRoutedToLeader(60_000);
  const goodRevision = await demo.revision();
  const fromMs = Date.now();
  try {
    await watchAndCheck(kind, leader);
  } finally {
    // Undone even when a check failed, so the next case starts from the good revision.
    await undoBadDeploy(demo, goodRevision, leader.templateHash);
  }
  const afterUndo = await demo.leaseSpec();
  const undoGap = longestWorkGap(leaderWork(logs), fromMs, Date.now());
  record('bad-deploy-undo', { variant, kind, longestWorkGapMs: undoGap.gapMs });
  assert.equal(afterUndo.holderIdentity, leader.name, `${kind}: still the old leader after undo`);
  assert.ok(undoGap.gapMs <= BAD_DEPLOY_GAP_BOUND_MS, `undo: gap ${undoGap.gapMs} ms`);
}

/** The checks of {@link badDeploy} while the bad template is applied. */
async function watchAndCheck(kind: BadTemplate, leader: PodView): Promise<void> {
  const variant = routing === 'readiness' ? 'leader-only readiness' : 'label routing';
  const figures = await watchBadDeploy(
    demo,
    logs,
    kind,
    badDeployWatch(kind, { newerTemplateSettleMs, retryPeriodMs }),
  );
  const { longestGap, ...rest } = figures;
  record('bad-deploy', { variant, ...rest, longestWorkGapMs: longestGap.gapMs });
  assert.equal(figures.leader, leader.name);
  assert.deepEqual(figures.holders, [leader.name], `${kind}: the old leader held the Lease`);
  assert.equal(figures.transitions, 0, `${kind}: no transition`);
  if (routing === 'readiness' || kind === 'pods that never become healthy') {
    // With label routing a pod that crashes 3 s after it started may pass /healthz meanwhile.
    assert.deepEqual(figures.everReady, [], `${kind}: no pod of the bad template was ever Ready`);
  }
  if (kind !== 'an image that cannot be pulled') {
    assert.ok(figures.advertised, `${kind}: the bad pods ran and advertised themselves`);
  }
  assert.ok(
    longestGap.gapMs <= BAD_DEPLOY_GAP_BOUND_MS,
    `${kind}: longest leader-work gap ${longestGap.gapMs} ms (${new Date(longestGap.fromMs).toISOString()} → ${new Date(longestGap.toMs).toISOString()})`,
  );
  // The bad pods are neither standbys (some never ran) nor Ready: check the leader alone.
  await assertLeaderRouted(leader.name);
}

/**
 * `name` holds the Lease, is live and Ready (with leader-only readiness: the only Ready pod), and
 * the Service's EndpointSlice holds it alone.
 */
async function assertLeaderRouted(name: string): Promise<void> {
  await eventually(
    async () => {
      const live = await demo.livePods();
      const pod = live.find((p) => p.name === name);
      assert.ok(pod?.ready, `${name} is live and Ready`);
      if (routing === 'readiness') {
        assert.deepEqual(
          live.filter((p) => p.ready).map((p) => p.name),
          [name],
          'only the leader is Ready',
        );
      }
      assert.equal((await demo.leaseSpec()).holderIdentity, name);
      assert.deepEqual(
        await readyEndpointIps(),
        [pod.ip],
        "the EndpointSlice holds the leader's IP alone",
      );
    },
    { timeoutMs: 20_000, intervalMs: 250 },
  );
}
