import { InvalidLeaderElectionOptionError } from '../../errors.js';
import { DEFAULT_ELECTION_NAME } from '../leader.constants.js';

/**
 * The one place where option names of the core (`LeaderElector`, the locks) become the names
 * the user wrote in `LeaderModule` options; names not listed are the same on both sides.
 */
const MODULE_OPTION_NAMES = {
  elector: { releaseOnStop: 'releaseOnShutdown' } as Record<string, string>,
  lock: { name: 'leaseName' } as Record<string, string>,
  metrics: { registry: 'metrics.registry' } as Record<string, string>,
  kubernetesEvents: {
    reportingController: 'kubernetesEvents.reportingController',
  } as Record<string, string>,
  podRoleLabel: { labelKey: 'podRoleLabel.labelKey' } as Record<string, string>,
};

/**
 * Runs `build` (a core constructor, which validates its options once) and re-throws its
 * `InvalidLeaderElectionOptionError` naming the option as the user wrote it in the module
 * options, and the election (unless it is the default one).
 */
export function withModuleOptionNames<T>(
  election: string,
  source: keyof typeof MODULE_OPTION_NAMES,
  build: () => T,
): T {
  try {
    return build();
  } catch (error) {
    if (!(error instanceof InvalidLeaderElectionOptionError)) throw error;
    throw new InvalidLeaderElectionOptionError(
      MODULE_OPTION_NAMES[source][error.option] ?? error.option,
      error.rule,
      error.value,
      election === DEFAULT_ELECTION_NAME ? undefined : election,
    );
  }
}
