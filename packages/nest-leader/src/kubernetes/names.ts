/** Validation of Kubernetes object names, as apimachinery's `validation.IsDNS1123…`. */

import { InvalidLeaderElectionOptionError } from '../errors.js';
import { kubernetesOptionRules } from './kubernetes.messages.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Whether `name` is a DNS-1123 subdomain of at most 253 characters — the form of most object
 * names, Pods' included (apimachinery's `IsDNS1123Subdomain`). A name read from a peer (a
 * holderIdentity) must pass before it goes into a request path: `..` or a name with `/` would
 * address another resource.
 */
export function isDnsSubdomain(name: unknown): name is string {
  return typeof name === 'string' && name.length <= 253 && DNS1123_SUBDOMAIN.test(name);
}

/**
 * Checks a Lease name: a DNS-1123 subdomain (lowercase alphanumerics, `-` and `.`, starting
 * and ending alphanumeric, at most 253 characters).
 * @param option - the option name to report, e.g. `leaseName`
 * @throws InvalidLeaderElectionOptionError naming `option` and the rule.
 */
export function validateLeaseName(name: unknown, option = 'name'): string {
  if (!isDnsSubdomain(name)) {
    throw new InvalidLeaderElectionOptionError(option, kubernetesOptionRules.leaseName, name);
  }
  return name;
}

/**
 * Checks a namespace name: a DNS-1123 label (lowercase alphanumerics and `-`, starting and
 * ending alphanumeric, at most 63 characters).
 * @param option - the option name to report, e.g. `namespace`
 * @throws InvalidLeaderElectionOptionError naming `option` and the rule.
 */
export function validateNamespace(namespace: unknown, option = 'namespace'): string {
  if (typeof namespace !== 'string' || namespace.length > 63 || !DNS1123_LABEL.test(namespace)) {
    throw new InvalidLeaderElectionOptionError(option, kubernetesOptionRules.namespace, namespace);
  }
  return namespace;
}
