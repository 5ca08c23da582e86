import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError } from './errors.js';
import type { LeaderLockKind, LeaderModuleOptions } from './leader-module-options.interface.js';
import { FileLock } from './locks/file.lock.js';
import { validateNamespace } from './locks/kubernetes-names.js';
import { LeaseLock } from './locks/lease.lock.js';
import { MemoryLock } from './locks/memory.lock.js';
import { resolveNamespace } from './locks/namespace.js';
import type { ResourceLock } from './locks/resource-lock.js';
import { nestMessages } from './messages.js';

/** Where Kubernetes mounts a pod's ServiceAccount token: its presence means "in a cluster". */
export const SERVICE_ACCOUNT_TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** The lock `LeaderModule` campaigns on, and what it chose. */
export interface SelectedLock {
  lock: ResourceLock;
  /** What was chosen; `'custom'` for a `ResourceLock` passed in the options. */
  kind: Exclude<LeaderLockKind, 'auto'> | 'custom';
  /** The Lease's namespace, for Kubernetes Leases. */
  namespace?: string;
}

/**
 * Builds the lock the `lock` option asks for (see {@link LeaderLockKind}). With `'auto'` and no
 * cluster configured, falls back to a `FileLock` and calls `onFileFallback` with the log line.
 * `identity` only names the candidate in Lease API errors.
 * @throws InvalidLeaderElectionOptionError for an unknown `lock`, an invalid `namespace`, or
 *   `'kubernetes'` without a configured cluster.
 */
export function selectLock(
  options: LeaderModuleOptions,
  identity: string,
  onFileFallback: (message: string) => void,
): SelectedLock {
  const lock = options.lock ?? 'auto';
  if (typeof lock === 'object' && lock !== null) return { lock, kind: 'custom' };
  switch (lock) {
    case 'memory':
      return { lock: new MemoryLock({ name: options.leaseName }), kind: 'memory' };
    case 'file':
      return { lock: new FileLock({ name: options.leaseName }), kind: 'file' };
    case 'kubernetes':
    case 'auto': {
      const kubeConfig = options.kubeConfig ?? configuredKubeConfig();
      if (kubeConfig) return leaseLock(options, identity, kubeConfig);
      if (lock === 'kubernetes') {
        throw new InvalidLeaderElectionOptionError('lock', nestMessages.noClusterRule, lock);
      }
      const fileLock = new FileLock({ name: options.leaseName });
      onFileFallback(nestMessages.fileLockFallback(fileLock.description));
      return { lock: fileLock, kind: 'file' };
    }
    default:
      throw new InvalidLeaderElectionOptionError('lock', nestMessages.lockRule, lock);
  }
}

/**
 * The kubeconfig `KubeConfig.loadFromDefault()` would use, or `undefined` when no cluster is
 * configured: no in-cluster ServiceAccount token, no `KUBECONFIG`, no `~/.kube/config`.
 * (`loadFromDefault()` itself silently falls back to http://localhost:8080 then.)
 */
export function configuredKubeConfig(): KubeConfig | undefined {
  const configured =
    Boolean(process.env.KUBECONFIG) ||
    existsSync(join(homedir(), '.kube', 'config')) ||
    existsSync(SERVICE_ACCOUNT_TOKEN_PATH);
  if (!configured) return undefined;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig.getCurrentCluster() ? kubeConfig : undefined;
}

function leaseLock(
  options: LeaderModuleOptions,
  identity: string,
  kubeConfig: KubeConfig,
): SelectedLock {
  const namespace = validateNamespace(
    resolveNamespace({ namespace: options.namespace, kubeConfig }),
  );
  return {
    lock: new LeaseLock({ kubeConfig, name: options.leaseName, namespace, identity }),
    kind: 'kubernetes',
    namespace,
  };
}
