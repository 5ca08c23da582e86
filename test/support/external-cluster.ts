/**
 * `TEST_KUBECONFIG`: run the tests against an existing cluster instead of our control plane.
 * Each run gets a fresh namespace with one ServiceAccount per test identity (tokens from the
 * TokenRequest API), so RBAC tests behave as on the local control plane.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_IDENTITIES, type ClusterIdentity, type ClusterInfo } from './control-plane.js';

/** An external cluster prepared for one run; `stop()` deletes the run's namespace. */
export interface ExternalCluster extends ClusterInfo {
  stop(): Promise<void>;
}

export async function prepareExternalCluster(kubeconfigPath: string): Promise<ExternalCluster> {
  const admin = new KubeConfig();
  admin.loadFromFile(kubeconfigPath);
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error(`TEST_KUBECONFIG=${kubeconfigPath} has no current cluster`);
  const core = admin.makeApiClient(CoreV1Api);
  const namespace = `nest-leader-test-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });

  const dir = mkdtempSync(join(tmpdir(), 'nest-leader-ext-'));
  const identities: Record<string, ClusterIdentity> = {};
  for (const name of DEFAULT_IDENTITIES) {
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
    const { status } = await core.createNamespacedServiceAccountToken({
      name,
      namespace,
      body: { spec: { audiences: [], expirationSeconds: 7200 } },
    });
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [cluster],
      users: [{ name, token: status!.token }],
      contexts: [{ name, cluster: cluster.name, user: name, namespace }],
      currentContext: name,
    });
    const path = join(dir, `kubeconfig-${name}`);
    writeFileSync(path, kc.exportConfig());
    identities[name] = {
      username: `system:serviceaccount:${namespace}:${name}`,
      kubeconfigPath: path,
    };
  }
  return {
    source: 'external',
    kubeconfigPath,
    namespace,
    identities,
    url: cluster.server,
    async stop() {
      await core.deleteNamespace({ name: namespace });
    },
  };
}
