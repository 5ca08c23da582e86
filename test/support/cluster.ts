/**
 * What test files use to reach the run's cluster (started once by global-setup.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { CoordinationV1Api, KubeConfig } from '@kubernetes/client-node';
import type { ClusterInfo } from './control-plane.js';

/** Environment variable naming the JSON file that describes the run's cluster. */
export const CLUSTER_ENV = 'NEST_LEADER_TEST_CLUSTER';

/**
 * The cluster of this test run.
 *
 * @throws Error when the file was started outside `pnpm test` (no global setup ran).
 */
export function getTestCluster(): ClusterInfo {
  const file = process.env[CLUSTER_ENV];
  if (!file) {
    throw new Error(
      `${CLUSTER_ENV} is not set: run the tests with \`pnpm test\` (its global setup starts the real control plane)`,
    );
  }
  return JSON.parse(readFileSync(file, 'utf8')) as ClusterInfo;
}

/** A KubeConfig for `identity` (a name from `cluster.identities`), or the admin when omitted. */
export function kubeConfigFor(cluster: ClusterInfo, identity?: string): KubeConfig {
  const kc = new KubeConfig();
  if (identity === undefined) {
    kc.loadFromFile(cluster.kubeconfigPath);
    return kc;
  }
  const id = cluster.identities[identity];
  if (!id) throw new Error(`unknown test identity "${identity}"`);
  kc.loadFromFile(id.kubeconfigPath);
  return kc;
}

/** Coordination API client as `identity` (admin when omitted). */
export function coordinationApi(cluster: ClusterInfo, identity?: string): CoordinationV1Api {
  return kubeConfigFor(cluster, identity).makeApiClient(CoordinationV1Api);
}

/** A Lease name no other test uses: `<prefix>-<random>`. */
export function uniqueLeaseName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** Writes `kc` to `path` (for child processes that take KUBECONFIG). */
export function writeKubeConfig(kc: KubeConfig, path: string): string {
  writeFileSync(path, kc.exportConfig());
  return path;
}

/** One JSON line of the control plane's audit log (metadata level). */
export interface AuditEvent {
  verb: string;
  stage: string;
  user: { username: string };
  objectRef?: { resource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp: string;
}

/** Completed coordination.k8s.io requests from the audit log (empty without one). */
export function readAuditEvents(cluster: ClusterInfo): AuditEvent[] {
  if (!cluster.auditLogPath) return [];
  return readFileSync(cluster.auditLogPath, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((e) => e.stage === 'ResponseComplete');
}
