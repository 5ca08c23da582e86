/**
 * Faults a test of the cluster tier applies to the node's own components (scripts/cluster.sh
 * runs them and keeps each one's pid in `<stateDir>/pids/<name>`): restart one (the script
 * stops and starts it on request), or stop and continue one with SIGSTOP / SIGCONT; and the
 * API server as the pods reach it (its ClusterIP, `/readyz` from a pod's network namespace),
 * to time a restart by.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { NodeCluster } from '@nest-leader/demo/launcher/node-cluster';

/** The components scripts/cluster.sh starts, by the names it logs them under. */
export type NodeComponent =
  | 'containerd'
  | 'control-plane'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubelet'
  | 'kube-proxy';

/** The component's current pid. @throws Error when the script wrote none (an older script). */
export function nodeComponentPid(cluster: NodeCluster, name: NodeComponent): number {
  const file = join(cluster.stateDir, 'pids', name);
  const pid = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : NaN;
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no pid of ${name} in ${file}`);
  return pid;
}

/**
 * Asks scripts/cluster.sh to restart `name` (SIGTERM, SIGKILL after 10 s, the same command
 * again) and resolves with the new pid once it runs.
 * @throws Error when the script has not restarted it within `timeoutMs`.
 */
export async function restartNodeComponent(
  cluster: NodeCluster,
  name: NodeComponent,
  timeoutMs = 30_000,
): Promise<number> {
  const request = join(cluster.stateDir, 'restart', name);
  const before = nodeComponentPid(cluster, name);
  writeFileSync(request, '');
  const started = performance.now();
  while (existsSync(request)) {
    if (performance.now() - started > timeoutMs)
      throw new Error(`scripts/cluster.sh did not restart ${name} within ${timeoutMs} ms`);
    await sleep(100);
  }
  const after = nodeComponentPid(cluster, name);
  if (after === before) throw new Error(`${name} still has pid ${before} after its restart`);
  return after;
}

/** SIGSTOPs (`paused`) or SIGCONTs a component: an API server that hangs without closing connections. */
export function setNodeComponentPaused(
  cluster: NodeCluster,
  name: NodeComponent,
  paused: boolean,
): void {
  process.kill(nodeComponentPid(cluster, name), paused ? 'SIGSTOP' : 'SIGCONT');
}

/** The kubernetes Service's ClusterIP: the address the pods reach the API server on. */
export async function apiServerClusterIp(cluster: NodeCluster): Promise<string> {
  const ip = await cluster.kubectl(
    'get',
    'service',
    'kubernetes',
    '-n',
    'default',
    '-o',
    'jsonpath={.spec.clusterIP}',
  );
  return ip.trim();
}

/**
 * `GET /readyz` of the API server the way the pods reach it: from a pod's network namespace
 * (the CNI's `/run/netns/cni-*`, which outlive the containers) through the kubernetes
 * Service's ClusterIP and kube-proxy's DNAT — not the host's loopback forward, which answered
 * 20 s before the pods' path after one cluster restart (pod chaos seed 3322, round 2); the
 * node's own namespace has no route to the ClusterIP. Resolves once one pod's namespace got
 * `ok`, with a 2-s timeout per request.
 * @throws Error when none did within `timeoutMs`.
 */
export async function waitForApiServerFromPods(
  cluster: NodeCluster,
  clusterIp: string,
  timeoutMs: number,
): Promise<void> {
  const started = performance.now();
  let last: unknown = 'no pod network namespace in /run/netns';
  while (performance.now() - started < timeoutMs) {
    const namespaces = existsSync('/run/netns')
      ? readdirSync('/run/netns').filter((name) => name.startsWith('cni-'))
      : [];
    for (const name of namespaces) {
      try {
        const { stdout } = await promisify(execFile)('nsenter', [
          `--net=/run/netns/${name}`,
          '--',
          cluster.kubectlBinary,
          'kubectl',
          '--kubeconfig',
          cluster.kubeconfig,
          '--server',
          `https://${clusterIp}:443`,
          '--request-timeout=2s',
          'get',
          '--raw',
          '/readyz',
        ]);
        if (stdout.trim() === 'ok') return;
        last = stdout.trim().slice(0, 200);
      } catch (error) {
        last = error instanceof Error ? error.message.slice(-200) : error;
      }
    }
    await sleep(250);
  }
  throw new Error(
    `the API server did not answer through ${clusterIp} from a pod within ${timeoutMs} ms: ${String(last)}`,
  );
}
