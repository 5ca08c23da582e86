/**
 * Faults a test of the cluster tier applies to the node's own components (scripts/cluster.sh
 * runs them and keeps each one's pid in `<stateDir>/pids/<name>`): restart one (the script
 * stops and starts it on request), or stop and continue one with SIGSTOP / SIGCONT.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
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
