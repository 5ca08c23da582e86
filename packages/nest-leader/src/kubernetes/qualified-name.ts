/**
 * Kubernetes qualified names (label keys, an Event's reportingController): an optional DNS
 * subdomain prefix of at most 253 characters and "/", then a name of at most 63 characters —
 * alphanumerics, "-", "_", ".", starting and ending alphanumeric (apimachinery's
 * `IsQualifiedName`).
 */
import { InvalidLeaderElectionOptionError } from '../errors.js';

const PREFIX = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;
const NAME = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** True if `value` is a qualified name. */
export function isQualifiedName(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const slash = value.lastIndexOf('/');
  const prefix = slash >= 0 ? value.slice(0, slash) : undefined;
  const name = slash >= 0 ? value.slice(slash + 1) : value;
  if (prefix !== undefined && (prefix.length > 253 || !PREFIX.test(prefix))) return false;
  return name.length <= 63 && NAME.test(name);
}

/**
 * `value` if it is a qualified name.
 * @param option - the option as the user wrote it, for the error
 * @param rule - the rule's text, for the error
 * @throws InvalidLeaderElectionOptionError naming `option` otherwise.
 */
export function validateQualifiedName(value: unknown, option: string, rule: string): string {
  if (!isQualifiedName(value)) throw new InvalidLeaderElectionOptionError(option, rule, value);
  return value;
}
