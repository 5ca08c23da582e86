/**
 * The texts of the Kubernetes plumbing: what is wrong with a kubeconfig, what to fix when a
 * request cannot be prepared from it, and the rules of the kubeConfig option.
 */

import { requestNotPreparedProblem } from '../errors.messages.js';
import { boundedText, errorText } from '../format.js';

/** Kubernetes resource of Pods (core API group), as RBAC names it. */
export const POD_RESOURCE = 'pods';

/**
 * What to fix for each kind of `configuration` failure of a Kubernetes request: the kubeconfig
 * cannot work as written, and retrying will not help.
 */
export const kubernetesConfigurationProblems = {
  requestNotPrepared: requestNotPreparedProblem,
  execPlugin:
    "The kubeconfig's exec credential plugin (users[].user.exec) failed: run its command " +
    'by hand to see why, or fix the command, its arguments or its environment.',
  missingFile: (path: string) =>
    `The kubeconfig names a file that cannot be read: ${path}. Fix client-certificate, ` +
    'client-key or certificate-authority in the kubeconfig, or create the file.',
  httpNotAllowed:
    "The cluster's server URL is http:// but the kubeconfig does not set " +
    'insecure-skip-tls-verify: use the https:// URL of the API server.',
  httpToHttps:
    "The cluster's server URL is http:// but the API server speaks HTTPS on that port: " +
    'use https:// in the kubeconfig.',
  tlsVerification: (code: string) =>
    `The API server's TLS certificate was not accepted (${code}): the kubeconfig's ` +
    'certificate-authority(-data) is not the CA that signed it, or the server URL names ' +
    'another host. Fix the CA or the server URL.',
} as const;

/** Problems `loadKubernetesConfig` reports, completing "The kubeconfig … ". */
export const kubeConfigProblems = {
  missing: 'does not exist.',
  empty: 'is empty.',
  notMergeable: (error: unknown) => `cannot be merged: ${boundedText(errorText(error))}.`,
  unreadable: (error: unknown) => `cannot be read: ${boundedText(errorText(error))}.`,
  /**
   * A YAML parser's failure by its reason and position only: js-yaml's message quotes the
   * lines around the position, which in a kubeconfig are `token:` or `client-key-data:`.
   */
  notYaml: (reason: string, line: number, column: number) =>
    `is not valid YAML: ${boundedText(reason, 120)} (line ${line}, column ${column}).`,
  /** client-node's check of the parsed kubeconfig (e.g. `users[0].name is missing`). */
  notKubeConfig: (error: unknown) =>
    `is not a valid kubeconfig: ${boundedText(errorText(error), 120)}.`,
  noCurrentContext:
    'has no current-context: run `kubectl config use-context <name>`, or set current-context.',
  unknownContext: (context: string) => `has current-context "${context}", which is not defined.`,
  unknownCluster: (context: string, cluster: string) =>
    `has context "${context}" naming cluster "${cluster}", which is not defined.`,
  noServer: (cluster: string) => `has cluster "${cluster}" without a server URL.`,
  allMissing: (paths: readonly string[]) =>
    `names only files that do not exist: ${paths.join(', ')}.`,
  noToken: (path: string) =>
    `has KUBERNETES_SERVICE_HOST set (this process runs in a pod) but no ServiceAccount token at ` +
    `${path}: set automountServiceAccountToken: true on the pod or its ServiceAccount, or pass ` +
    'kubeConfig.',
  noHost: (path: string) =>
    `has a ServiceAccount token at ${path} but KUBERNETES_SERVICE_HOST or ` +
    'KUBERNETES_SERVICE_PORT is not set (Kubernetes sets both in every pod): pass kubeConfig.',
} as const;

/** Rules of the Kubernetes options: kubeConfig, names, request timeout. */
export const kubernetesOptionRules = {
  leaseName:
    "must be a DNS-1123 subdomain: at most 253 characters of a-z, 0-9, '-' and '.', " +
    'starting and ending with a letter or digit',
  namespace:
    "must be a DNS-1123 label: at most 63 characters of a-z, 0-9 and '-', " +
    'starting and ending with a letter or digit',
  requestTimeoutMs: 'must be a positive number of milliseconds',
  kubeConfigRule:
    'must be a KubeConfig from @kubernetes/client-node (new KubeConfig() + loadFromFile(), ' +
    'loadFromCluster(), …) or the path of a kubeconfig file',
  kubeConfigFileRule: (problem: string) =>
    `must be a KubeConfig or the path of a usable kubeconfig file; that file ${problem.replace(/\.$/, '')}`,
} as const;
