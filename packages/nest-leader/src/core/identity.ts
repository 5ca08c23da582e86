import { hostname } from 'node:os';

/**
 * This process's default candidate identity: `POD_NAME` (set it from the downward API,
 * `fieldRef: metadata.name`), else `${hostname}-${pid}`. Unique per process; a restarted pod
 * keeps its name and takes its own Lease back at once.
 * @param env - environment to read; default `process.env`
 */
export function resolveIdentity(env: NodeJS.ProcessEnv = process.env): string {
  const podName = env.POD_NAME?.trim();
  return podName ? podName : `${hostname()}-${process.pid}`;
}
