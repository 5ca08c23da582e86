/**
 * Pod objects on the control plane, which runs no kubelet and no controllers: a Pod stays
 * Pending, and its metadata (labels, annotations, creationTimestamp) is what the integration
 * tests read and write.
 */
import { type CoreV1Api, type V1Pod } from '@kubernetes/client-node';

/**
 * Creates Pod `name` (a pause container that never runs) with `labels` in `namespace`, after
 * the namespace's `default` ServiceAccount, which a cluster's service-account controller would
 * create and the API server requires.
 */
export async function createPodObject(
  core: CoreV1Api,
  namespace: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<V1Pod> {
  await core
    .createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } })
    .catch((error: { code?: number }) => {
      if (error.code !== 409) throw error;
    });
  return core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, labels },
      spec: {
        automountServiceAccountToken: false,
        containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
      },
    },
  });
}
