/**
 * The demo's own RBAC (apps/demo/deploy: ServiceAccount, Role, RoleBinding) applied to the
 * test cluster, and a kubeconfig authenticating as that ServiceAccount (a TokenRequest token,
 * as a pod gets). Each call gets its own copy (a name suffix) in the test namespace.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
} from '@kubernetes/client-node';
import {
  applyManifests,
  DEMO_SERVICE_ACCOUNT,
  loadDemoManifests,
} from '@nest-leader/demo/launcher/demo-manifests';
import { serviceAccountKubeConfig } from '@nest-leader/demo/launcher/kube-access';
import { kubeConfigFor } from '../../support/cluster.js';
import type { ClusterInfo } from '../../support/control-plane.js';

/** The demo's ServiceAccount in the test cluster, with its Role bound. */
export interface DemoServiceAccount {
  namespace: string;
  /** ServiceAccount name (the demo's, plus a suffix). */
  name: string;
  /** `system:serviceaccount:<namespace>:<name>`. */
  username: string;
  /** The verbs its Role grants on leases (it also grants create on events, get and patch on pods). */
  verbs: string[];
  kubeConfig: KubeConfig;
  /** A kubeconfig file for child processes (KUBECONFIG). */
  kubeconfigPath: string;
  /** Deletes the ServiceAccount, Role and RoleBinding and the kubeconfig file. */
  dispose(): Promise<void>;
}

type RoleObject = KubernetesObject & {
  rules: { resources: string[]; verbs: string[]; resourceNames?: string[] }[];
};

/**
 * Applies the demo's ServiceAccount, Role and RoleBinding to the cluster's test namespace.
 * @param leaseName - the Lease the Role's `resourceNames` name (the test's own)
 * @param options.withoutVerbs - verbs to drop from the Role (to test what breaks without them)
 */
export async function provisionDemoServiceAccount(
  cluster: ClusterInfo,
  leaseName: string,
  options: { withoutVerbs?: string[] } = {},
): Promise<DemoServiceAccount> {
  const admin = kubeConfigFor(cluster);
  const namespace = cluster.namespace;
  const suffix = `-${randomBytes(3).toString('hex')}`;
  const objects = loadDemoManifests({
    namespace,
    nameSuffix: suffix,
    kinds: ['ServiceAccount', 'Role', 'RoleBinding'],
    leaseName,
  });
  const role = objects.find((o) => o.kind === 'Role') as RoleObject;
  for (const rule of role.rules) {
    rule.verbs = rule.verbs.filter((v) => !options.withoutVerbs?.includes(v));
  }
  role.rules = role.rules.filter((rule) => rule.verbs.length > 0);
  await applyManifests(admin, objects);
  const name = `${DEMO_SERVICE_ACCOUNT}${suffix}`;
  const kubeConfig = await serviceAccountKubeConfig(admin, namespace, name, 3600);
  const dir = mkdtempSync(join(tmpdir(), 'nest-leader-e2e-sa-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, kubeConfig.exportConfig(), { mode: 0o600 });
  return {
    namespace,
    name,
    username: `system:serviceaccount:${namespace}:${name}`,
    verbs: role.rules.filter((r) => r.resources.includes('leases')).flatMap((r) => r.verbs),
    kubeConfig,
    kubeconfigPath,
    async dispose() {
      const api = KubernetesObjectApi.makeApiClient(admin);
      for (const object of objects.reverse()) {
        await api.delete(object).catch((error: { code?: number }) => {
          if (error.code !== 404) throw error;
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
