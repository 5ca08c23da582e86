import { readFile } from 'node:fs/promises';
import type { LeaderFileContent, SidecarLeaderResponse } from 'nest-leader/core';

const LEADER_FILE = '/leader-election/is-leader';

/**
 * This pod's fencing token while its sidecar leads, else undefined. A file past its
 * `expiresAt` is stale: its sidecar died without removing it (SIGKILL, OOM), and another pod
 * may lead by now.
 */
export async function leaderToken(): Promise<number | undefined> {
  try {
    const content = JSON.parse(await readFile(LEADER_FILE, 'utf8')) as LeaderFileContent;
    if (!(Date.parse(content.expiresAt) > Date.now())) return undefined;
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
