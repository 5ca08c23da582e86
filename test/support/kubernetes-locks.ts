/**
 * The Kubernetes locks a test candidate can campaign on, by the name tests use for them.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { ResourceLock } from 'nest-leader';
import { ConfigMapLock, LeaseLock } from 'nest-leader/core';

/** What every Kubernetes lock needs. */
export interface KubernetesLockTarget {
  kubeConfig: KubeConfig;
  name: string;
  namespace: string;
  identity: string;
}

/** Kinds of lock the test candidates understand. */
export type TestLockKind = 'lease' | 'configmap';

/** A lock of `kind` on `target`. @throws Error for a kind this helper does not know. */
export function makeKubernetesLock(kind: string, target: KubernetesLockTarget): ResourceLock {
  switch (kind) {
    case 'lease':
      return new LeaseLock(target);
    case 'configmap':
      return new ConfigMapLock(target);
    default:
      throw new Error(`unknown lock kind "${kind}" (lease | configmap)`);
  }
}
