import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from './election/clock.js';
import type { LockKind } from './locks/lock-selection.js';
import type { ResourceLock } from './locks/resource-lock.js';

/**
 * Where the Lease record lives (the table is `LOCK_KINDS` in `locks/lock-selection.ts`):
 * - `'auto'`: a Kubernetes Lease whenever a Kubernetes configuration exists (the `kubeConfig`
 *   option, `KUBECONFIG`, an in-cluster ServiceAccount token or `KUBERNETES_SERVICE_HOST`,
 *   `~/.kube/config`); a configuration that exists but is unusable fails at bootstrap
 *   (`KubeConfigError`). A file in the OS temp directory named after the Lease only when no
 *   configuration exists at all (one host only; logged once).
 * - `'kubernetes'`: a `coordination.k8s.io/v1` Lease; fails at bootstrap if no cluster is configured.
 * - `'file'`: a `FileLock` in the OS temp directory: replicas on one host (local development).
 * - `'memory'`: a `MemoryLock` private to this application: always leader, for tests.
 */
export type LeaderLockKind = LockKind;

/** Options of `LeaderModule.forRoot()`/`forRootAsync()`. */
export interface LeaderModuleOptions {
  /** Name of the Lease (a DNS-1123 subdomain), shared by every replica that competes. Required. */
  leaseName: string;
  /**
   * Namespace of the Lease. Default: `POD_NAMESPACE`, else the ServiceAccount namespace file,
   * else the kubeconfig context's namespace, else `default`. Only used by Kubernetes Leases.
   */
  namespace?: string;
  /** This replica's unique identity. Default: `POD_NAME`, else `${hostname}-${pid}`. */
  identity?: string;
  /** Seconds (whole) followers wait after the last observed renewal before taking over. Default 15. */
  leaseDurationSeconds?: number;
  /** Seconds the leader keeps failing to renew before it steps down; < leaseDuration. Default 10. */
  renewDeadlineSeconds?: number;
  /** Seconds between acquire/renew attempts; renewDeadline > 1.2 × retryPeriod. Default 2. */
  retryPeriodSeconds?: number;
  /**
   * On shutdown, after in-flight work drained, clear the Lease holder so a follower takes over
   * at once instead of after `leaseDurationSeconds`. Default true.
   */
  releaseOnShutdown?: boolean;
  /** Where the Lease lives: a {@link LeaderLockKind} or your own `ResourceLock`. Default `'auto'`. */
  lock?: LeaderLockKind | ResourceLock;
  /**
   * Kubernetes client configuration for the Lease: a loaded `KubeConfig`, or the path of a
   * kubeconfig file. Default: `KUBECONFIG`, else in-cluster, else `~/.kube/config` (see
   * {@link LeaderLockKind}).
   */
  kubeConfig?: KubeConfig | string;
  /**
   * Milliseconds to wait, when a term ends (shutdown or lost leadership), for running
   * `@LeaderOnly()` invocations and `@OnLeadershipLost()` handlers before the Lease is released
   * or the replica campaigns again. Default 10000. Keep it below the pod's
   * `terminationGracePeriodSeconds`.
   */
  shutdownGraceMs?: number;
  /** After losing leadership: `'recampaign'` (default) or `'stop'` campaigning. */
  onLost?: 'recampaign' | 'stop';
  /** Source of time for the elector and the drain timeout; for tests (`ManualClock`). */
  clock?: Clock;
}

/** Every key of {@link LeaderModuleOptions}; anything else is rejected at bootstrap as a likely typo. */
export const LEADER_MODULE_OPTION_NAMES: readonly (keyof LeaderModuleOptions)[] = [
  'leaseName',
  'namespace',
  'identity',
  'leaseDurationSeconds',
  'renewDeadlineSeconds',
  'retryPeriodSeconds',
  'releaseOnShutdown',
  'lock',
  'kubeConfig',
  'shutdownGraceMs',
  'onLost',
  'clock',
];

/** What `forRootAsync({ useClass })` / `({ useExisting })` provides. */
export interface LeaderModuleOptionsFactory {
  createLeaderOptions(): LeaderModuleOptions | Promise<LeaderModuleOptions>;
}
