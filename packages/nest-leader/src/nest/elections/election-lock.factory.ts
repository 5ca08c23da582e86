import { Logger } from '@nestjs/common';
import { selectLock, type SelectedLock } from '../../locks/lock-selection.js';
import type { ResourceLock } from '../../locks/resource-lock.js';
import { withModuleOptionNames } from './election-options.mapping.js';
import type { ResolvedElectionOptions } from './elections.interfaces.js';

/** What was chosen for the locks this factory built, for the start line; others are `custom`. */
const selections = new WeakMap<ResourceLock, Pick<SelectedLock, 'kind' | 'namespace'>>();

/**
 * Builds the lock the election's `lock` option asks for, through the lock-selection table
 * (`LOCK_KINDS`): the default provider of `getElectionLockToken(name)`. Logs the selection's
 * notice, if any (a file lock chosen by `'auto'`, an ignored `kubeConfig`).
 * @throws InvalidLeaderElectionOptionError naming the option as the user wrote it.
 * @throws KubeConfigError when a Kubernetes configuration exists but cannot be used.
 */
export function buildElectionLock(options: ResolvedElectionOptions): ResourceLock {
  const selected = withModuleOptionNames(options.name, 'lock', () =>
    selectLock({
      leaseName: options.leaseName,
      namespace: options.namespace,
      identity: options.identity,
      lock: options.lock,
      kubeConfig: options.kubeConfig,
    }),
  );
  if (selected.notice) new Logger('LeaderElection').log(selected.notice);
  selections.set(selected.lock, { kind: selected.kind, namespace: selected.namespace });
  return selected.lock;
}

/** What {@link buildElectionLock} chose for `lock`; `custom` for a lock provided otherwise. */
export function describeElectionLock(lock: ResourceLock): Pick<SelectedLock, 'kind' | 'namespace'> {
  return selections.get(lock) ?? { kind: 'custom' };
}
