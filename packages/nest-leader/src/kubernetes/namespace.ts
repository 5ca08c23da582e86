import { readFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';

/** Where Kubernetes mounts the pod's namespace with its ServiceAccount token. */
export const SERVICE_ACCOUNT_NAMESPACE_PATH =
  '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** Inputs of {@link resolveNamespace}; each is optional. */
export interface ResolveNamespaceOptions {
  /** Explicit namespace; wins when set. */
  namespace?: string;
  /** Environment to read `POD_NAMESPACE` from; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The ServiceAccount namespace file; default {@link SERVICE_ACCOUNT_NAMESPACE_PATH}. */
  serviceAccountNamespacePath?: string;
  /** A loaded kubeconfig whose current context may name a namespace. */
  kubeConfig?: KubeConfig;
}

/**
 * The namespace of the Lease: the explicit option, else `POD_NAMESPACE`, else the
 * ServiceAccount namespace file (in-cluster), else the kubeconfig current context's
 * namespace, else `default`. Does not validate the result (see `validateNamespace`).
 */
export function resolveNamespace(opts: ResolveNamespaceOptions = {}): string {
  const env = opts.env ?? process.env;
  return (
    nonEmpty(opts.namespace) ??
    nonEmpty(env.POD_NAMESPACE) ??
    readNamespaceFile(opts.serviceAccountNamespacePath ?? SERVICE_ACCOUNT_NAMESPACE_PATH) ??
    contextNamespace(opts.kubeConfig) ??
    'default'
  );
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function readNamespaceFile(path: string): string | undefined {
  try {
    return nonEmpty(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

function contextNamespace(kubeConfig: KubeConfig | undefined): string | undefined {
  if (!kubeConfig) return undefined;
  return nonEmpty(kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace);
}
