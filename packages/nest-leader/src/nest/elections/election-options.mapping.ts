import {
  LEADER_ELECTOR_SETTING_NAMES,
  type LeaderElectorSettings,
} from '../../core/leader-elector.options.js';
import { InvalidLeaderElectionOptionError } from '../../errors.js';
import { DEFAULT_ELECTION_NAME } from '../leader.constants.js';
import {
  ELECTOR_SETTING_MODULE_NAMES,
  type LeaderModuleElectorSettings,
  moduleSettingName,
} from '../leader-module-options.interfaces.js';
import type { ResolvedElectionOptions } from './elections.interfaces.js';

/**
 * The one place where option names of the core (`LeaderElector`, the locks) become the names
 * the user wrote in `LeaderModule` options; names not listed are the same on both sides.
 */
const MODULE_OPTION_NAMES = {
  elector: ELECTOR_SETTING_MODULE_NAMES as Record<string, string>,
  lock: { name: 'leaseName' } as Record<string, string>,
  metrics: { registry: 'metrics.registry' } as Record<string, string>,
  kubernetesEvents: {
    reportingController: 'kubernetesEvents.reportingController',
  } as Record<string, string>,
  podRoleLabel: { labelKey: 'podRoleLabel.labelKey' } as Record<string, string>,
};

/**
 * The elector settings among module options (`LeaderModuleElectorSettings`), each under the
 * module's name, leaving out unset ones (so they do not hide `forRoot()`'s defaults).
 */
export function pickElectorSettings(options: object): LeaderModuleElectorSettings {
  const picked: Record<string, unknown> = {};
  for (const name of LEADER_ELECTOR_SETTING_NAMES) {
    const value = (options as Record<string, unknown>)[moduleSettingName(name)];
    if (value !== undefined) picked[moduleSettingName(name)] = value;
  }
  return picked as LeaderModuleElectorSettings;
}

/**
 * The `LeaderElector` settings of an election's resolved options, by the elector's names: what
 * the elector is built with, unchanged (it checks them and applies its defaults).
 */
export function toElectorSettings(
  options: ResolvedElectionOptions,
): Partial<LeaderElectorSettings> & Pick<LeaderElectorSettings, 'identity'> {
  const settings: Record<string, unknown> = {};
  for (const name of LEADER_ELECTOR_SETTING_NAMES)
    settings[name] = options[moduleSettingName(name)];
  return settings as Partial<LeaderElectorSettings> & Pick<LeaderElectorSettings, 'identity'>;
}

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
