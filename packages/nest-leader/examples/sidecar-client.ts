import { readFile, stat } from 'node:fs/promises';
import type { LeaderFileContent, SidecarLeaderResponse } from 'nest-leader';

const LEADER_FILE = '/leader-election/is-leader';
const RENEW_DEADLINE_MS = 5_000; // --ttl=10s → renew deadline ttl/2

/**
 * This pod's fencing token while its sidecar leads, else undefined. A file older than the
 * renew deadline is stale: its sidecar died without removing it (SIGKILL, OOM).
 */
export async function leaderToken(): Promise<number | undefined> {
  try {
    const { mtimeMs } = await stat(LEADER_FILE);
    if (Date.now() - mtimeMs > RENEW_DEADLINE_MS) return undefined;
    const content = JSON.parse(await readFile(LEADER_FILE, 'utf8')) as LeaderFileContent;
    return content.leaseTransitions;
  } catch {
    return undefined; // no file: not the leader
  }
}

/** Who leads, as the sidecar in this pod sees it (`''` when nobody does). */
export async function currentLeader(): Promise<string> {
  const response = await fetch('http://localhost:4040/', { signal: AbortSignal.timeout(1000) });
  return ((await response.json()) as SidecarLeaderResponse).name;
}
