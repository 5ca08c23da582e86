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
