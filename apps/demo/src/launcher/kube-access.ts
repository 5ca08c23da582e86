/**
 * Small Kubernetes helpers shared by the launcher (`pnpm demo --kube`) and the tests: a
 * kubeconfig for a ServiceAccount (as its pods get), and the Lease as `kubectl get lease`
 * shows it. Framework-free.
 */
import { CoordinationV1Api, CoreV1Api, KubeConfig, type V1Lease } from '@kubernetes/client-node';

/**
 * A kubeconfig that authenticates as ServiceAccount `namespace/name` with a token from the
 * TokenRequest API (what the kubelet mounts into pods), on the admin's cluster.
 * @param admin - a kubeconfig allowed to create `serviceaccounts/token`
 * @param expirationSeconds - token lifetime, at least 600 (API minimum)
 */
export async function serviceAccountKubeConfig(
  admin: KubeConfig,
  namespace: string,
  name: string,
  expirationSeconds = 3600,
): Promise<KubeConfig> {
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('the admin kubeconfig has no current cluster');
  const { status } = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds } },
  });
  if (!status?.token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  const kc = new KubeConfig();
  const user = `system:serviceaccount:${namespace}:${name}`;
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: user, token: status.token }],
    contexts: [{ name: user, cluster: cluster.name, user, namespace }],
    currentContext: user,
  });
  return kc;
}

/** The Lease, or `undefined` if it does not exist. */
export async function readLease(
  kc: KubeConfig,
  namespace: string,
  name: string,
): Promise<V1Lease | undefined> {
  try {
    return await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ name, namespace });
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

/** kubectl's short age: `45s`, `3m12s`, `17m`, `5h3m`, `4d`. */
export function kubectlAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return `${h}h${m % 60 ? `${m % 60}m` : ''}`;
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

/**
 * Leases as `kubectl get lease` prints them, plus a TRANSITIONS column
 * (`kubectl get lease -o custom-columns=…` would show the same).
 */
export function formatLeaseTable(leases: readonly V1Lease[], now = new Date()): string {
  const rows = [
    ['NAME', 'HOLDER', 'AGE', 'TRANSITIONS'],
    ...leases.map((lease) => [
      lease.metadata?.name ?? '',
      lease.spec?.holderIdentity || '<none>',
      lease.metadata?.creationTimestamp
        ? kubectlAge(now.getTime() - new Date(lease.metadata.creationTimestamp).getTime())
        : '<unknown>',
      String(lease.spec?.leaseTransitions ?? 0),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]! + 3)))
        .join('')
        .trimEnd(),
    )
    .join('\n');
}
