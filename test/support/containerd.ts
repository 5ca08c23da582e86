/** Faults a test of the cluster tier applies to its node's container runtime. */
import { execFile } from 'node:child_process';
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
