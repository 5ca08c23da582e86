/**
 * The real kube-apiserver + etcd of `test/control-plane` for one benchmark: started, given
 * the elector's RBAC for the candidates, and always stopped (and its state directory removed).
 */
import { rmSync } from 'node:fs';
import { startControlPlane, type ControlPlane } from '@nest-leader/test/support/control-plane.js';
import { grantLeaseAccess } from '@nest-leader/test/support/rbac.js';

/**
 * Starts a control plane, grants `identities` the elector's verbs on Leases, runs `body`,
 * then stops the control plane whatever happened.
 */
export async function withControlPlane<T>(
  identities: readonly string[],
  body: (cluster: ControlPlane) => Promise<T>,
): Promise<T> {
  const startedMs = performance.now();
  const cluster = await startControlPlane();
  try {
    const seconds = ((performance.now() - startedMs) / 1000).toFixed(1);
    console.log(`  control plane ready at ${cluster.url} in ${seconds} s`);
    for (const identity of identities) await grantLeaseAccess(cluster, identity);
    return await body(cluster);
  } finally {
    await cluster.stop();
    if (cluster.stateDir) rmSync(cluster.stateDir, { recursive: true, force: true });
  }
}
