/** Faults a test of the cluster tier applies to its node's container runtime. */
import { execFile } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { NodeCluster } from '@nest-leader/demo/launcher/node-cluster';

const run = promisify(execFile);

/** Kills a container as the runtime would on an OOM kill (`ctr task kill -s SIGKILL`). */
export async function killContainer(cluster: NodeCluster, containerId: string): Promise<void> {
  await run('ctr', [
    '--address',
    cluster.containerdAddress,
    '-n',
    'k8s.io',
    'task',
    'kill',
    '-s',
    'SIGKILL',
    containerId,
  ]);
}

/** The cgroup v1 freezer hierarchy the node's containers live in (cgroupfs driver). */
const FREEZER_ROOT = '/sys/fs/cgroup/freezer';

/** The freezer cgroup directory of a container: the directory named by its ID, at any depth. */
function freezerCgroup(containerId: string, dir = FREEZER_ROOT, depth = 0): string | undefined {
  if (depth > 5) return undefined;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (!statSync(path).isDirectory()) continue;
    if (name === containerId) return path;
    const found = freezerCgroup(containerId, path, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Freezes (`FROZEN`) or thaws (`THAWED`) every process of a container through its cgroup v1
 * freezer, as a node under memory pressure or a paused VM stops a process: no signal, no timer.
 * @throws Error when the container's freezer cgroup is not found.
 */
export function setContainerFrozen(containerId: string, frozen: boolean): void {
  const cgroup = freezerCgroup(containerId);
  if (!cgroup) throw new Error(`no freezer cgroup named ${containerId} under ${FREEZER_ROOT}`);
  writeFileSync(join(cgroup, 'freezer.state'), frozen ? 'FROZEN' : 'THAWED');
}

/** The host PID of a container's task (`ctr task ls`). @throws Error when it has no task. */
export async function containerPid(cluster: NodeCluster, containerId: string): Promise<number> {
  const { stdout } = await run('ctr', [
    '--address',
    cluster.containerdAddress,
    '-n',
    'k8s.io',
    'task',
    'ls',
  ]);
  const row = stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find((cells) => cells[0] === containerId);
  const pid = Number(row?.[1]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`container ${containerId} has no task`);
  return pid;
}

/**
 * Drops (or stops dropping) every packet a container sends to `destination` (an IPv4 address),
 * with iptables inside the container's own network namespace (the pod's: nsenter into its
 * task's), so only that pod is cut off — e.g. from the API server's Service IP.
 */
export async function setEgressDrop(
  cluster: NodeCluster,
  containerId: string,
  destination: string,
  dropping: boolean,
): Promise<void> {
  const pid = await containerPid(cluster, containerId);
  await run('nsenter', [
    '-t',
    String(pid),
    '-n',
    'iptables',
    dropping ? '-I' : '-D',
    'OUTPUT',
    '-d',
    `${destination}/32`,
    '-j',
    'DROP',
  ]);
}
