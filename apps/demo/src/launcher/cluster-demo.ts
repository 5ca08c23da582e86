/**
 * `pnpm demo --cluster`: the demo as a user deploys it. Builds the images, starts the
 * repository's one-node cluster (scripts/cluster.sh), applies `apps/demo/deploy` verbatim with
 * kustomize, and prints one status line a second: the Lease's holder and leaseTransitions, and
 * per pod its role label, Ready state and restarts. `--chaos N` deletes the leader pod every N s
 * (the kubelet's SIGTERM and grace period; the Deployment replaces it).
 */
import type { V1Lease, V1PodList } from '@kubernetes/client-node';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { assignmentLeaseName, parseShardAssignment, SHARDS_ANNOTATION } from 'nest-leader/core';
import { ORDER_SHARDS, SHARDED_ELECTION } from '../demo.constants.js';
import { REPO_ROOT } from './control-plane-process.js';
import type { DemoCliOptions } from './demo-cli.js';
import { startNodeCluster, type NodeCluster } from './node-cluster.js';

const NAMESPACE = 'nest-leader-demo';
const SELECTOR = 'app.kubernetes.io/name=nest-leader-demo';

const say = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

interface PodStatus {
  name: string;
  role: string;
  ready: boolean;
  restarts: number;
  terminating: boolean;
}

async function podStatuses(cluster: NodeCluster): Promise<PodStatus[]> {
  const list = await cluster.getJson<V1PodList>('get', 'pods', '-n', NAMESPACE, '-l', SELECTOR);
  return list.items.map((pod) => ({
    name: pod.metadata!.name!,
    role: pod.metadata!.labels?.['nest-leader/role'] ?? '?',
    ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    restarts: pod.status?.containerStatuses?.[0]?.restartCount ?? 0,
    terminating: Boolean(pod.metadata!.deletionTimestamp),
  }));
}

async function leaseSpec(
  cluster: NodeCluster,
  name: string,
): Promise<{ holder: string; transitions: number } | undefined> {
  try {
    const spec = (await cluster.getJson<V1Lease>('get', 'lease', name, '-n', NAMESPACE)).spec ?? {};
    return { holder: spec.holderIdentity || '(released)', transitions: spec.leaseTransitions ?? 0 };
  } catch {
    return undefined; // not created yet
  }
}

/**
 * Shards of the sharded election `orders` per pod, from its assignment Lease
 * (`<LEASE_NAME>-orders-shards`): ` · orders shards abc12 6, def34 5, …`, or '' before it exists.
 */
async function shardsPerPod(cluster: NodeCluster, leaseName: string): Promise<string> {
  try {
    const lease = await cluster.getJson<V1Lease>(
      'get',
      'lease',
      assignmentLeaseName(`${leaseName}-${SHARDED_ELECTION}`),
      '-n',
      NAMESPACE,
    );
    const assignment = parseShardAssignment(
      lease.metadata?.annotations?.[SHARDS_ANNOTATION],
      ORDER_SHARDS,
    );
    if (!assignment) return '';
    const counts = new Map<string, number>();
    for (const grant of assignment.shards) {
      const owner = grant.owner?.identity ?? 'unowned';
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    const text = [...counts]
      .map(([owner, n]) => `${owner.replace(/^nest-leader-demo-/, '')} ${n}`)
      .join(', ');
    return ` · ${SHARDED_ELECTION} shards r${assignment.revision}: ${text}`;
  } catch {
    return ''; // not created yet
  }
}

/** Runs the cluster demo until Ctrl-C (or --duration); resolves with the exit code. */
export async function runClusterDemo(options: DemoCliOptions): Promise<number> {
  say(
    'starting the one-node cluster (first run: builds the node binary and the images, several minutes)',
  );
  const cluster = await startNodeCluster({
    stateDir: join(REPO_ROOT, '.demo/cluster'),
    onProgress: (line) => say(line),
  });
  console.log(`KUBECONFIG=${cluster.kubeconfig}`);
  let stopping = false;
  const stop = new Promise<void>((done) => {
    const onSignal = () => {
      if (stopping) return;
      stopping = true;
      say('stopping: the pods get their SIGTERM, then the node and the control plane stop');
      done();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    if (options.durationSeconds) setTimeout(onSignal, options.durationSeconds * 1000).unref();
  });
  try {
    say(`kubectl apply -k apps/demo/deploy`);
    for (const line of (await cluster.kubectl('apply', '-k', join(REPO_ROOT, 'apps/demo/deploy')))
      .trim()
      .split('\n')) {
      say(`  ${line}`);
    }
    let nextChaos = options.chaosSeconds
      ? performance.now() + options.chaosSeconds * 1000
      : Infinity;
    while (!stopping) {
      const [lease, shards, pods] = await Promise.all([
        leaseSpec(cluster, options.leaseName),
        shardsPerPod(cluster, options.leaseName),
        podStatuses(cluster).catch(() => []),
      ]);
      const podText = pods
        .map(
          (p) =>
            `${p.name.replace(/^nest-leader-demo-/, '')} ${p.terminating ? 'terminating' : p.role}${p.ready ? ' Ready' : ''}${p.restarts ? ` restarts=${p.restarts}` : ''}`,
        )
        .join(' | ');
      say(
        `holder ${lease?.holder ?? '-'} (transitions ${lease?.transitions ?? '-'})${shards} · ${podText || 'no pods yet'}`,
      );
      if (
        performance.now() >= nextChaos &&
        lease &&
        pods.some((p) => p.name === lease.holder && !p.terminating)
      ) {
        say(`chaos: kubectl delete pod ${lease.holder}`);
        await cluster.kubectl('delete', 'pod', lease.holder, '-n', NAMESPACE, '--wait=false');
        nextChaos = performance.now() + options.chaosSeconds! * 1000;
      }
      await Promise.race([sleep(1000), stop]);
    }
    return 0;
  } finally {
    await cluster.stop();
    say('stopped');
  }
}
