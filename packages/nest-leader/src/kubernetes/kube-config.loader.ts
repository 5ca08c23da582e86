/**
 * Finding and loading the Kubernetes configuration without `KubeConfig.loadFromDefault()`,
 * whose last resort is a silent `http://localhost:8080` and which cannot tell "no
 * configuration" from "a broken one". Order, as controller-runtime's `config.GetConfig`:
 * `KUBECONFIG`, then in-cluster (ServiceAccount token / `KUBERNETES_SERVICE_HOST`), then
 * `~/.kube/config`. Whatever is found must load, or the caller gets a `KubeConfigError` naming
 * the variable or file and the problem.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError, KubeConfigError } from '../errors.js';
import type { KubeConfigSource } from '../errors.messages.js';
import { kubeConfigProblems, kubernetesOptionRules } from './kubernetes.messages.js';
import { loadClientNode } from './client-node.loader.js';

/** Where Kubernetes mounts a pod's ServiceAccount credentials. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Where Kubernetes mounts a pod's ServiceAccount token: its presence means "in a cluster". */
export const SERVICE_ACCOUNT_TOKEN_PATH = `${SERVICE_ACCOUNT_DIR}/token`;

/** What {@link findKubernetesConfig} looks at; every field defaults to the real machine. */
export interface KubernetesEnvironment {
  /** Environment variables (`KUBECONFIG`, `KUBERNETES_SERVICE_HOST`/`_PORT`); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Home directory holding `.kube/config`; default `os.homedir()`. */
  homeDir?: string;
  /** The ServiceAccount token file; default {@link SERVICE_ACCOUNT_TOKEN_PATH}. */
  serviceAccountTokenPath?: string;
}

/** A Kubernetes configuration that exists (whether or not it is usable). */
export type FoundKubernetesConfig =
  | { source: 'KUBECONFIG'; paths: string[] }
  | { source: 'in-cluster'; tokenPath: string; host: string | undefined; port: string | undefined }
  | { source: '~/.kube/config'; path: string };

/**
 * The Kubernetes configuration present on this machine, or `undefined` when there is none at
 * all: `KUBECONFIG` unset or empty, no ServiceAccount token, no `KUBERNETES_SERVICE_HOST`, no
 * `~/.kube/config`. Does not read or check the files (see {@link loadKubernetesConfig}).
 */
export function findKubernetesConfig(
  environment: KubernetesEnvironment = {},
): FoundKubernetesConfig | undefined {
  const env = environment.env ?? process.env;
  const paths = (env.KUBECONFIG ?? '').split(delimiter).filter((path) => path.trim() !== '');
  if (paths.length > 0) return { source: 'KUBECONFIG', paths };
  const tokenPath = environment.serviceAccountTokenPath ?? SERVICE_ACCOUNT_TOKEN_PATH;
  const host = env.KUBERNETES_SERVICE_HOST || undefined;
  if (host || existsSync(tokenPath)) {
    return {
      source: 'in-cluster',
      tokenPath,
      host,
      port: env.KUBERNETES_SERVICE_PORT || undefined,
    };
  }
  const path = join(environment.homeDir ?? homedir(), '.kube', 'config');
  if (existsSync(path)) return { source: '~/.kube/config', path };
  return undefined;
}

/**
 * Loads a configuration {@link findKubernetesConfig} found and checks it names a usable current
 * context and cluster. Files listed in `KUBECONFIG` that do not exist are skipped, as kubectl
 * does, unless none exists.
 * @throws KubeConfigError naming the source (`KUBECONFIG`, `~/.kube/config`, in-cluster), the
 *   file and the problem.
 */
export function loadKubernetesConfig(found: FoundKubernetesConfig): KubeConfig {
  switch (found.source) {
    case 'in-cluster': {
      if (!existsSync(found.tokenPath)) {
        throw new KubeConfigError(
          'in-cluster',
          undefined,
          kubeConfigProblems.noToken(found.tokenPath),
        );
      }
      if (!found.host || !found.port) {
        throw new KubeConfigError(
          'in-cluster',
          undefined,
          kubeConfigProblems.noHost(found.tokenPath),
        );
      }
      const kubeConfig = new (loadClientNode().KubeConfig)();
      kubeConfig.loadFromCluster();
      return kubeConfig;
    }
    case 'KUBECONFIG': {
      const existing = found.paths.filter((path) => existsSync(path));
      if (existing.length === 0) {
        const problem =
          found.paths.length === 1
            ? kubeConfigProblems.missing
            : kubeConfigProblems.allMissing(found.paths);
        throw new KubeConfigError('KUBECONFIG', found.paths.join(delimiter), problem);
      }
      const [kubeConfig, ...rest] = existing.map((path) => loadFile(path, 'KUBECONFIG'));
      const paths = existing.join(delimiter);
      try {
        for (const other of rest) kubeConfig!.mergeConfig(other, true);
      } catch (error) {
        throw new KubeConfigError('KUBECONFIG', paths, kubeConfigProblems.notMergeable(error));
      }
      if (!kubeConfig!.getCurrentContext()) {
        kubeConfig!.setCurrentContext(rest.map((c) => c.getCurrentContext()).find(Boolean) ?? '');
      }
      checkCurrentCluster(kubeConfig!, 'KUBECONFIG', paths);
      return kubeConfig!;
    }
    case '~/.kube/config': {
      const kubeConfig = loadFile(found.path, '~/.kube/config');
      checkCurrentCluster(kubeConfig, '~/.kube/config', found.path);
      return kubeConfig;
    }
  }
}

/**
 * `value` as a `KubeConfig`: a loaded one is returned as is, a string is loaded as the path of
 * a kubeconfig file and checked like `KUBECONFIG` is.
 * @param option - the option's name as the user wrote it, e.g. `kubeConfig`
 * @throws InvalidLeaderElectionOptionError naming `option` for anything else (a plain object,
 *   a number), a missing or unreadable file, or a kubeconfig without a usable current context.
 */
export function validateKubeConfig(value: unknown, option: string): KubeConfig {
  if (isKubeConfig(value)) return value;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidLeaderElectionOptionError(option, kubernetesOptionRules.kubeConfigRule, value);
  }
  try {
    if (!existsSync(value)) {
      throw new KubeConfigError('kubeConfig option', value, kubeConfigProblems.missing);
    }
    const kubeConfig = loadFile(value, 'kubeConfig option');
    checkCurrentCluster(kubeConfig, 'kubeConfig option', value);
    return kubeConfig;
  } catch (error) {
    if (!(error instanceof KubeConfigError)) throw error;
    throw new InvalidLeaderElectionOptionError(
      option,
      kubernetesOptionRules.kubeConfigFileRule(error.problem),
      value,
    );
  }
}

/**
 * True for a client-node `KubeConfig`, also one from another copy of the package (checked by
 * shape, not `instanceof`).
 */
export function isKubeConfig(value: unknown): value is KubeConfig {
  const candidate = value as Partial<KubeConfig> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.makeApiClient === 'function' &&
    typeof candidate.getCurrentCluster === 'function' &&
    typeof candidate.getCurrentUser === 'function'
  );
}

function loadFile(path: string, source: KubeConfigSource): KubeConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new KubeConfigError(source, path, kubeConfigProblems.unreadable(error), { cause: error });
  }
  if (text.trim() === '') throw new KubeConfigError(source, path, kubeConfigProblems.empty);
  const kubeConfig = new (loadClientNode().KubeConfig)();
  try {
    kubeConfig.loadFromString(text);
  } catch (error) {
    // No `cause`: the parser's error quotes the file's lines, which may be credentials.
    throw new KubeConfigError(source, path, parseProblem(error));
  }
  return kubeConfig;
}

/**
 * What is wrong with a kubeconfig that did not load, without a word of its text: a YAML error
 * (js-yaml's `YAMLException`: `reason` and a 0-based `mark`) by reason, line and column; a
 * structure error from client-node by its message (it names fields, not values), bounded.
 */
function parseProblem(error: unknown): string {
  const { reason, mark } = (error ?? {}) as {
    reason?: unknown;
    mark?: { line?: unknown; column?: unknown };
  };
  if (typeof reason === 'string') {
    const line = typeof mark?.line === 'number' ? mark.line + 1 : 0;
    const column = typeof mark?.column === 'number' ? mark.column + 1 : 0;
    return kubeConfigProblems.notYaml(reason, line, column);
  }
  return kubeConfigProblems.notKubeConfig(error);
}

/** Throws unless the current context exists and names a defined cluster with a server. */
function checkCurrentCluster(kubeConfig: KubeConfig, source: KubeConfigSource, path: string): void {
  const current = kubeConfig.getCurrentContext();
  if (!current) throw new KubeConfigError(source, path, kubeConfigProblems.noCurrentContext);
  const context = kubeConfig.getContextObject(current);
  if (!context) throw new KubeConfigError(source, path, kubeConfigProblems.unknownContext(current));
  const cluster = kubeConfig.getCluster(context.cluster);
  if (!cluster) {
    throw new KubeConfigError(
      source,
      path,
      kubeConfigProblems.unknownCluster(current, context.cluster),
    );
  }
  if (!cluster.server)
    throw new KubeConfigError(source, path, kubeConfigProblems.noServer(cluster.name));
}
