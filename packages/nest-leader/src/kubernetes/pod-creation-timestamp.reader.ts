/**
 * Reads one Pod's `metadata.creationTimestamp` from the API server: what dates a candidate's
 * pod template (`LeaderElectorOptions.podCreationTimestamp`), which the downward API cannot
 * give. One `get`, bounded by a timeout, failures classified as the locks classify theirs.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubernetesApiError } from '../errors.js';
import { classifyKubernetesApiError } from './api-errors.js';
import { loadClientNode } from './client-node.loader.js';
import { POD_RESOURCE } from './kubernetes.messages.js';
import { kubernetesRequestOptions, type KubernetesRequestOptions } from './request-options.js';

/** Default timeout of the `get`, ms. */
export const DEFAULT_POD_GET_TIMEOUT_MS = 5_000;

/** What {@link readPodCreationTimestamp} reads. */
export interface PodCreationTimestampRequest {
  kubeConfig: KubeConfig;
  /** The Pod's name (a DNS-1123 subdomain). */
  podName: string;
  namespace: string;
  /** Timeout of the `get` in ms; default {@link DEFAULT_POD_GET_TIMEOUT_MS}. */
  requestTimeoutMs?: number;
}

/**
 * The Pod's `metadata.creationTimestamp`, or `undefined` when the response has none (a
 * server that is not a kube-apiserver).
 * @throws KubernetesApiError classified (`forbidden` without RBAC `get` on `pods`,
 *   `not-found`, `timeout`, `transient`, `configuration`, …), its message naming the request
 *   and what to fix, never the kubeconfig's credentials.
 */
export async function readPodCreationTimestamp(
  request: PodCreationTimestampRequest,
): Promise<Date | undefined> {
  const { kubeConfig, podName, namespace } = request;
  let options: KubernetesRequestOptions | undefined;
  try {
    const k8s = loadClientNode();
    options = kubernetesRequestOptions(request.requestTimeoutMs ?? DEFAULT_POD_GET_TIMEOUT_MS);
    const pod = await kubeConfig
      .makeApiClient(k8s.CoreV1Api)
      .readNamespacedPod({ name: podName, namespace }, options.options);
    const created: unknown = pod?.metadata?.creationTimestamp;
    const time = created instanceof Date || typeof created === 'string' ? new Date(created) : null;
    return time && !Number.isNaN(time.getTime()) ? time : undefined;
  } catch (error) {
    throw classifyKubernetesApiError(
      {
        verb: 'get',
        resource: POD_RESOURCE,
        name: podName,
        namespace,
        sent: options?.sent() ?? false,
      },
      error,
    ) as KubernetesApiError;
  }
}
