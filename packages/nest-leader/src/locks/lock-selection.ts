/**
 * Which lock an election campaigns on: one table from the `lock` option's value to the factory
 * that builds it and the text that explains it. Framework-free; the Nest layer calls
 * {@link selectLock} once per election.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError } from '../errors.js';
import { lockSelectionMessages, testRunnerMessages } from './lock-selection.messages.js';
import { FileLock } from './file/file.lock.js';
import {
  findKubernetesConfig,
  type KubernetesEnvironment,
  loadKubernetesConfig,
  validateKubeConfig,
} from '../kubernetes/kube-config.loader.js';
import { validateNamespace } from '../kubernetes/names.js';
import { ConfigMapLock } from './kubernetes-object/configmap.lock.js';
import { LeaseLock } from './kubernetes-object/lease.lock.js';
import { SidecarLock } from './sidecar.lock.js';
import { MemoryLock } from './memory.lock.js';
import { resolveNamespace } from '../kubernetes/namespace.js';
import type { ResourceLock } from './resource-lock.js';

/** The built-in values of the `lock` option; see {@link LOCK_KINDS} for what each means. */
export type LockKind = 'auto' | 'kubernetes' | 'configmap' | 'file' | 'memory';

/**
 * Follow a `nest-leader-elector` sidecar in the same pod instead of campaigning: `{ sidecar:
 * 'http://localhost:4040' }` (its `--http` address). See `SidecarLock`.
 */
export interface SidecarLockSpec {
  /** Base URL of the sidecar's HTTP endpoints. */
  sidecar: string;
}

/** What {@link selectLock} needs, named as the user's options name them. */
export interface LockSelectionOptions {
  /**
   * A {@link LockKind}, `{ sidecar: url }`, your own `ResourceLock`, or `undefined` for
   * `'auto'`. Checked here.
   */
  lock?: LockKind | SidecarLockSpec | ResourceLock;
  /** Name of the Lease (or lock file); validated by the lock. */
  leaseName: string;
  /** Namespace of a Kubernetes Lease; default as `resolveNamespace()`. */
  namespace?: string;
  /** The candidate's identity, only to name it in Lease API errors. */
  identity?: string;
  /** A loaded `KubeConfig`, or the path of a kubeconfig file. Default: found as {@link LOCK_KINDS} says. */
  kubeConfig?: KubeConfig | string;
  /** Where to look for a Kubernetes configuration; default: this machine (for tests). */
  environment?: KubernetesEnvironment;
}

/** The lock chosen, and what to say about it. */
export interface SelectedLock {
  lock: ResourceLock;
  /** What was built; `'custom'` for a `ResourceLock` passed in the options. */
  kind: Exclude<LockKind, 'auto'> | 'sidecar' | 'custom';
  /** The Lease's namespace, for Kubernetes Leases. */
  namespace?: string;
  /** Where the Kubernetes configuration came from (`KUBECONFIG`, `in-cluster`, …), for Leases. */
  source?: string;
  /**
   * A line to log once at startup: `'auto'` chose a single-host file lock, or a memory lock in a
   * test runner, or `kubeConfig` was given with a lock that ignores it.
   */
  notice?: string;
}

/** One row of {@link LOCK_KINDS}. */
export interface LockKindEntry {
  /** What the kind means, one sentence (used in docs and messages). */
  summary: string;
  /** Builds the lock. */
  select(options: LockSelectionOptions): SelectedLock;
}

/**
 * The lock kinds:
 * - `'auto'`: a Kubernetes Lease whenever any Kubernetes configuration exists — the
 *   `kubeConfig` option, `KUBECONFIG`, in-cluster credentials (a ServiceAccount token or
 *   `KUBERNETES_SERVICE_HOST`), or `~/.kube/config` — and a `FileLock` only when none does.
 *   A configuration that exists but cannot be used is an error, never a fallback. Without any
 *   configuration inside a test runner (`JEST_WORKER_ID` or `VITEST` set), a `MemoryLock`
 *   instead: a test's election is private to its process and never joins the running dev
 *   server's file lock (`lock: 'file'` opts back in).
 * - `'kubernetes'`: a Lease; a missing configuration is an error too.
 * - `'configmap'`: client-go's historical record in a ConfigMap's annotation (`ConfigMapLock`),
 *   for fleets that still elect on a ConfigMap; found like `'kubernetes'`.
 * - `'file'`: a `FileLock` in this project's directory under the OS temp directory (replicas
 *   on one host; see `defaultFileLockDirectory`).
 * - `'memory'`: a `MemoryLock` private to this process (always leader; tests).
 */
export const LOCK_KINDS: Readonly<Record<LockKind, LockKindEntry>> = {
  auto: {
    summary: lockSelectionMessages.autoSummary,
    select: (options) => {
      const kubeConfig = kubeConfigOf(options, false);
      if (kubeConfig)
        return kubernetesLock(options, kubeConfig.config, kubeConfig.source, 'kubernetes');
      const runner = testRunner(options.environment?.env ?? process.env);
      if (runner) {
        const lock = new MemoryLock({ name: options.leaseName });
        return { lock, kind: 'memory', notice: testRunnerMessages.memoryLockChosen(runner) };
      }
      const lock = new FileLock({ name: options.leaseName });
      return { lock, kind: 'file', notice: lockSelectionMessages.fileLockChosen(lock.description) };
    },
  },
  kubernetes: {
    summary: lockSelectionMessages.kubernetesSummary,
    select: (options) => {
      const kubeConfig = kubeConfigOf(options, true, 'kubernetes')!;
      return kubernetesLock(options, kubeConfig.config, kubeConfig.source, 'kubernetes');
    },
  },
  configmap: {
    summary: lockSelectionMessages.configmapSummary,
    select: (options) => {
      const kubeConfig = kubeConfigOf(options, true, 'configmap')!;
      return kubernetesLock(options, kubeConfig.config, kubeConfig.source, 'configmap');
    },
  },
  file: {
    summary: lockSelectionMessages.fileSummary,
    select: (options) => ({
      lock: new FileLock({ name: options.leaseName }),
      kind: 'file',
      notice: ignoredKubeConfig(options, 'file'),
    }),
  },
  memory: {
    summary: lockSelectionMessages.memorySummary,
    select: (options) => ({
      lock: new MemoryLock({ name: options.leaseName }),
      kind: 'memory',
      notice: ignoredKubeConfig(options, 'memory'),
    }),
  },
};

/**
 * Builds the lock `options.lock` asks for (see {@link LOCK_KINDS}). Synchronous; loads
 * `@kubernetes/client-node` only when the result is a Kubernetes Lease.
 * @throws InvalidLeaderElectionOptionError naming `lock`, `kubeConfig`, `leaseName` or
 *   `namespace` when one is invalid (`'kubernetes'` without any configuration names `lock`).
 * @throws KubeConfigError when a Kubernetes configuration exists but cannot be used (`KUBECONFIG`
 *   names a missing file, a kubeconfig has no current context or is not YAML, a pod without
 *   a ServiceAccount token).
 */
export function selectLock(options: LockSelectionOptions): SelectedLock {
  const lock: unknown = options.lock ?? 'auto';
  if (typeof lock === 'string' && Object.hasOwn(LOCK_KINDS, lock)) {
    return LOCK_KINDS[lock as LockKind].select(options);
  }
  if (isResourceLock(lock)) return { lock, kind: 'custom' };
  if (isSidecarSpec(lock)) return { lock: new SidecarLock({ url: lock.sidecar }), kind: 'sidecar' };
  throw new InvalidLeaderElectionOptionError(
    'lock',
    lockSelectionMessages.lockRule(Object.keys(LOCK_KINDS)),
    lock,
  );
}

/**
 * The test runner this process runs under, by the variables it sets in its workers:
 * `JEST_WORKER_ID` (Jest), `VITEST` (Vitest); `undefined` outside one.
 */
export function testRunner(env: NodeJS.ProcessEnv): 'Jest' | 'Vitest' | undefined {
  if (env.JEST_WORKER_ID) return 'Jest';
  if (env.VITEST) return 'Vitest';
  return undefined;
}

/** A warning when `kubeConfig` was given with a lock that does not use it. */
function ignoredKubeConfig(options: LockSelectionOptions, kind: LockKind): string | undefined {
  return options.kubeConfig === undefined
    ? undefined
    : lockSelectionMessages.kubeConfigIgnored(kind);
}

function isSidecarSpec(value: unknown): value is SidecarLockSpec {
  return typeof value === 'object' && value !== null && 'sidecar' in value;
}

function isResourceLock(value: unknown): value is ResourceLock {
  const lock = value as Partial<ResourceLock> | null;
  return (
    typeof lock === 'object' &&
    lock !== null &&
    typeof lock.description === 'string' &&
    typeof lock.get === 'function' &&
    typeof lock.create === 'function' &&
    typeof lock.update === 'function'
  );
}

/**
 * The kubeconfig to use: the option, else whatever configuration exists (loaded, or a
 * `KubeConfigError`); `undefined` when none exists and `required` is false.
 */
function kubeConfigOf(
  options: LockSelectionOptions,
  required: boolean,
  kind: LockKind = 'kubernetes',
): { config: KubeConfig; source: string } | undefined {
  if (options.kubeConfig !== undefined) {
    return {
      config: validateKubeConfig(options.kubeConfig, 'kubeConfig'),
      source: 'kubeConfig option',
    };
  }
  const found = findKubernetesConfig(options.environment);
  if (found) return { config: loadKubernetesConfig(found), source: found.source };
  if (!required) return undefined;
  throw new InvalidLeaderElectionOptionError(
    'lock',
    lockSelectionMessages.noClusterRule.replace("'kubernetes'", `'${kind}'`),
    kind,
  );
}

function kubernetesLock(
  options: LockSelectionOptions,
  kubeConfig: KubeConfig,
  source: string,
  kind: 'kubernetes' | 'configmap',
): SelectedLock {
  const namespace = validateNamespace(
    resolveNamespace({ namespace: options.namespace, kubeConfig }),
    'namespace',
  );
  const target = { kubeConfig, name: options.leaseName, namespace, identity: options.identity };
  const lock = kind === 'configmap' ? new ConfigMapLock(target) : new LeaseLock(target);
  return { lock, kind, namespace, source };
}
