import type { KubeConfig } from '@kubernetes/client-node';
import type { ShardedElectionModuleOptions } from './sharded-elections/sharded-election-options.interfaces.js';
import type { FactoryProvider, ModuleMetadata, Provider, Type } from '@nestjs/common';
import {
  LEADER_ELECTOR_SETTING_NAMES,
  type LeaderElectorSettingName,
  type LeaderElectorSettings,
} from '../core/leader-elector.options.js';
import type { LockKind, SidecarLockSpec } from '../locks/lock-selection.js';
import type { ResourceLock } from '../locks/resource-lock.js';
import type { PrometheusRegistry } from '../observability/election-metrics.interfaces.js';
import type { CatchUpSetting } from './schedule/catch-up.options.js';

/**
 * Where the Lease record lives (the table is `LOCK_KINDS` in `locks/lock-selection.ts`):
 * - `'auto'`: a Kubernetes Lease whenever a Kubernetes configuration exists (the `kubeConfig`
 *   option, `KUBECONFIG`, an in-cluster ServiceAccount token or `KUBERNETES_SERVICE_HOST`,
 *   `~/.kube/config`); a configuration that exists but is unusable fails at bootstrap
 *   (`KubeConfigError`). A file in the OS temp directory named after the Lease only when no
 *   configuration exists at all (one host only; logged once) — or, under a test runner
 *   (`JEST_WORKER_ID` or `VITEST` set), a `MemoryLock` private to the process (logged once).
 * - `'kubernetes'`: a `coordination.k8s.io/v1` Lease; fails at bootstrap if no cluster is configured.
 * - `'configmap'`: a `ConfigMapLock` (client-go's historical record in the annotation
 *   `control-plane.alpha.kubernetes.io/leader` of ConfigMap `leaseName`), to join a fleet that
 *   still elects on a ConfigMap; found like `'kubernetes'`. RBAC: get, create, update on configmaps.
 * - `'file'`: a `FileLock` in the OS temp directory: replicas on one host (local development).
 * - `'memory'`: a `MemoryLock` private to this election: always leader, for tests.
 */
export type LeaderLockKind = LockKind;

/**
 * The `LeaderElector` settings the module names differently from the elector (by the core's
 * name): the only Nest-side list of elector options. Every other setting of
 * `LEADER_ELECTOR_OPTION_KINDS` is a module option of the same name, type and meaning.
 */
export const ELECTOR_SETTING_MODULE_NAMES = Object.freeze({
  releaseOnStop: 'releaseOnShutdown',
  handoffOnStop: 'handoffOnShutdown',
} as const satisfies Partial<Record<LeaderElectorSettingName, string>>);

type RenamedSetting = keyof typeof ELECTOR_SETTING_MODULE_NAMES;

/**
 * Every `LeaderElector` setting (`LeaderElectorSettings`) as a module option: optional, under
 * the elector's name unless {@link ELECTOR_SETTING_MODULE_NAMES} renames it (renamed ones are
 * declared in {@link LeaderModuleOptions}), passed through to the elector unchanged (which
 * checks it, naming the option as the user wrote it).
 */
export type LeaderModuleElectorSettings = Partial<Omit<LeaderElectorSettings, RenamedSetting>> & {
  [K in RenamedSetting as (typeof ELECTOR_SETTING_MODULE_NAMES)[K]]?: LeaderElectorSettings[K];
};

/** The module option name of an elector setting (see {@link ELECTOR_SETTING_MODULE_NAMES}). */
export function moduleSettingName(
  name: LeaderElectorSettingName,
): keyof LeaderModuleElectorSettings {
  const renamed: Partial<Record<LeaderElectorSettingName, keyof LeaderModuleElectorSettings>> =
    ELECTOR_SETTING_MODULE_NAMES;
  return renamed[name] ?? (name as keyof LeaderModuleElectorSettings);
}

/**
 * Options of `LeaderModule.forRoot()`/`forRootAsync()`: the default election, and defaults of
 * every named one. Besides its own options, every setting of `LeaderElector` (identity,
 * timings, `watchLease`, `onLost`, `podTemplateHash`, `priority`, `clock`, …) under its own
 * name, except `releaseOnStop` and `handoffOnStop`, which are `releaseOnShutdown` and
 * `handoffOnShutdown` here.
 */
export interface LeaderModuleOptions extends LeaderModuleElectorSettings {
  /** Name of the Lease (a DNS-1123 subdomain), shared by every replica that competes. Required. */
  leaseName: string;
  /**
   * Namespace of the Lease. Default: `POD_NAMESPACE`, else the ServiceAccount namespace file,
   * else the kubeconfig context's namespace, else `default`. Only used by Kubernetes Leases.
   */
  namespace?: string;
  /** This replica's unique identity. Default: `POD_NAME`, else `${hostname}-${pid}`. */
  identity?: string;
  /**
   * On shutdown, after in-flight work drained, clear the Lease holder so a follower takes over
   * at once instead of after `leaseDurationSeconds`. Default true.
   */
  releaseOnShutdown?: boolean;
  /**
   * On shutdown, with `releaseOnShutdown`, hand the Lease to the preferred replica among those
   * advertising `podTemplateHash` or `priority` (the order: `preferredCandidate` of
   * `nest-leader/core`) instead of releasing it to anyone; release when none advertises itself or the
   * handoff fails. Default true. (The elector's `handoffOnStop`.)
   */
  handoffOnShutdown?: boolean;
  /**
   * Where the Lease lives: a {@link LeaderLockKind}, `{ sidecar: 'http://localhost:4040' }` to
   * follow a `nest-leader-elector` sidecar in the pod (`SidecarLock`), or your own
   * `ResourceLock`. Default `'auto'`. Named elections inherit a kind, never a `ResourceLock`
   * instance or a sidecar (one lock is one Lease).
   */
  lock?: LeaderLockKind | SidecarLockSpec | ResourceLock;
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
  /**
   * Prometheus metrics of the election (`PrometheusElectionObserver`; needs the optional peer
   * dependency `prom-client`): `true` registers them in prom-client's global registry (the one
   * `@willsoto/nestjs-prometheus` serves on `/metrics`), `{ registry }` in yours. Also counts
   * `@LeaderOnly()` calls. Default off.
   */
  metrics?: boolean | { registry?: PrometheusRegistry };
  /**
   * Kubernetes Events on the Lease when this replica starts and stops leading
   * (`LeaseEventsObserver`): `true`, or `{ reportingController }`. In a sharded election: a
   * `ShardsMoved` Event on the assignment Lease (`<leaseName>-shards`) when the coordinator
   * grants shards, at most one per 10 s (`ShardEventsObserver`). Needs RBAC `create` on
   * `events.events.k8s.io`; Kubernetes Leases only (ignored with a warning otherwise).
   * Default off.
   */
  kubernetesEvents?: boolean | { reportingController?: string };
  /**
   * Pod role labels (`PodRoleLabelObserver`): the leader's Pod `nest-leader/role=leader`, the
   * others' `standby`; `true`, or `{ labelKey }`. Needs `POD_NAME` and `POD_NAMESPACE` from the
   * downward API and RBAC `patch` on `pods`; Kubernetes Leases only (ignored with a warning
   * otherwise). Default off.
   */
  podRoleLabel?: boolean | { labelKey?: string };
  /**
   * Default catch-up of the election's leader-only recurring jobs (`@LeaderOnly()` on `@Cron`
   * or `@Interval`) that set none: `'skip'`, `'once'` or `'all'`, or `{ policy, horizonMs?,
   * maxCatchUp? }` (see `CatchUpSetting` and `LeaderOnlyOptions.catchUp`). Default `'skip'`.
   */
  catchUp?: CatchUpSetting;
}

/** Every key of {@link LeaderModuleOptions}; anything else is rejected at bootstrap as a likely typo. */
export const LEADER_MODULE_OPTION_NAMES: readonly (keyof LeaderModuleOptions)[] = Object.freeze([
  'leaseName',
  'namespace',
  ...LEADER_ELECTOR_SETTING_NAMES.map(moduleSettingName),
  'lock',
  'kubeConfig',
  'shutdownGraceMs',
  'metrics',
  'kubernetesEvents',
  'podRoleLabel',
  'catchUp',
] satisfies (keyof LeaderModuleOptions)[]);

/** What `forRootAsync({ useClass })` / `({ useExisting })` provides. */
export interface LeaderModuleOptionsFactory {
  /** The default election's options (and the named elections' defaults), once at startup. */
  createLeaderOptions(): LeaderModuleOptions | Promise<LeaderModuleOptions>;
}

/**
 * The options of one named election, without its name: its own `leaseName` (required) and any
 * option of {@link LeaderModuleOptions} to override the defaults `LeaderModule.forRoot()` set.
 */
export type ElectionOptions = Omit<Partial<LeaderModuleOptions>, 'leaseName'> &
  Pick<LeaderModuleOptions, 'leaseName'>;

/** Options of `LeaderModule.registerElection()` that shape the module rather than the election. */
export interface ElectionModuleExtras {
  /**
   * The election's name (`@LeaderOnly('shard-a')`, `@InjectElection('shard-a')`): non-empty,
   * unique in the application, not `'default'` (that is `forRoot()`'s election).
   */
  name: string;
  /**
   * Register the election's providers globally, so `@InjectElection(name)` works in every
   * module. Default true: one election is one elector per application.
   */
  isGlobal?: boolean;
  /**
   * Providers added to the election's module after its own, so they replace them: a
   * `ResourceLock` under `getElectionLockToken(name)`, an `ElectionObserver` under
   * `getElectionObserverToken(name)`, or the whole elector under `getLeaderElectorToken(name)`.
   */
  providers?: Provider[];
}

/** Options of `LeaderModule.registerElection()`. */
export interface RegisterElectionOptions
  extends ElectionOptions, ElectionModuleExtras, ShardedElectionModuleOptions {}

/** What `registerElectionAsync({ useClass })` / `({ useExisting })` provides. */
export interface ElectionOptionsFactory {
  /**
   * The named election's options, once at startup.
   * @param name - the election's name, as given to `registerElectionAsync`
   */
  createElectionOptions(name: string): ElectionOptions | Promise<ElectionOptions>;
}

/**
 * Options of `LeaderModule.registerElectionAsync()`: the name is static (it names the
 * election's providers), and so are `shards`, `drainTimeoutSeconds` and `shardStore` (with
 * `shards` the module holds a sharded election's providers); the rest comes from `useFactory` (with `inject`), `useClass` or
 * `useExisting`, as `@nestjs/bullmq`'s `registerQueueAsync`.
 */
export interface RegisterElectionAsyncOptions
  extends ElectionModuleExtras, ShardedElectionModuleOptions, Pick<ModuleMetadata, 'imports'> {
  /** Builds the election's options from the providers listed in `inject`. */
  useFactory?: (...args: never[]) => ElectionOptions | Promise<ElectionOptions>;
  inject?: FactoryProvider['inject'];
  useClass?: Type<ElectionOptionsFactory>;
  useExisting?: Type<ElectionOptionsFactory>;
}
