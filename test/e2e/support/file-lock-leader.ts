/**
 * One demo replica alone on a file lock in `dir` (no cluster): started, and leading.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import type { LeadershipAcquiredEvent } from '@nest-leader/demo/demo-events';
import { ReplicaProcess } from '@nest-leader/demo/launcher/replica-process';

/**
 * Starts a replica named `identity` on a fresh file lock under `dir` (also its HOME), with
 * `env` added, and resolves once it leads.
 * @param onStart - gets the process as soon as it is spawned, so the caller can kill it
 *   whatever happens next
 * @throws Error when it does not lead within 30 s.
 */
export async function startFileLockLeader(
  dir: string,
  identity: string,
  env: Record<string, string>,
  onStart: (replica: ReplicaProcess) => void,
): Promise<ReplicaProcess> {
  const replica = ReplicaProcess.start({
    identity,
    port: 0,
    env: {
      HOME: dir,
      KUBECONFIG: undefined,
      LEADER_LOCK: 'file',
      LEADER_LOCK_DIR: mkdtempSync(join(dir, 'lock-')),
      ...env,
    },
  });
  onStart(replica);
  await replica.started();
  await replica.waitForEvent(
    (e): e is LeadershipAcquiredEvent => e.event === 'leadership-acquired',
    { timeoutMs: 30_000, description: 'it to lead' },
  );
  return replica;
}
