/**
 * node:test global setup (`--test-global-setup`): one real cluster for the whole run.
 *
 * - `TEST_KUBECONFIG` set → that cluster, in a fresh namespace with its own service accounts.
 * - otherwise → our own kube-apiserver + etcd from `test/control-plane` (built if needed).
 *
 * Test files read the description through `getTestCluster()` (support/cluster.ts). Nothing is
 * skipped: if no cluster can be had, setup throws and the run fails.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLUSTER_ENV } from './cluster.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { prepareExternalCluster, type ExternalCluster } from './external-cluster.js';

let cluster: ControlPlane | ExternalCluster | undefined;

export async function globalSetup(): Promise<void> {
  const started = performance.now();
  const external = process.env.TEST_KUBECONFIG;
  cluster = external ? await prepareExternalCluster(external) : await startControlPlane();
  const file = join(mkdtempSync(join(tmpdir(), 'nest-leader-test-')), 'cluster.json');
  const { stop: _stop, restart: _restart, ...info } = cluster as ControlPlane;
  writeFileSync(file, JSON.stringify(info, null, 2));
  process.env[CLUSTER_ENV] = file;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`# test cluster (${cluster.source}) ready at ${cluster.url} in ${seconds} s`);
}

export async function globalTeardown(): Promise<void> {
  await cluster?.stop();
}
