import {
  LEADER_ELECTION_TIMING_NAMES,
  LEADER_ELECTOR_SETTING_NAMES,
  type LeaderElectorSettings,
} from '../../core/leader-elector.options.js';
import { InvalidLeaderElectionOptionError } from '../../errors.js';
import { DEFAULT_ELECTION_NAME } from '../leader.constants.js';
import {
  ELECTOR_SETTING_MODULE_NAMES,
  moduleSettingName,
} from '../leader-module-options.interfaces.js';
import type { ElectorSettingsAsGiven, ResolvedElectionOptions } from './elections.interfaces.js';

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

/** The elector settings the resolver passes on as given: all but the timings (resolved apart). */
const PASSED_SETTING_NAMES = LEADER_ELECTOR_SETTING_NAMES.filter(
  (name) => !(LEADER_ELECTION_TIMING_NAMES as readonly string[]).includes(name),
);

/**
 * The elector settings among module options (`LeaderModuleElectorSettings`) but the timings,
 * each under the module's name, leaving out unset ones (so they do not hide `forRoot()`'s
 * defaults).
 */
export function pickElectorSettings(options: object): ElectorSettingsAsGiven {
  const picked: Record<string, unknown> = {};
  for (const name of PASSED_SETTING_NAMES) {
    const value = (options as Record<string, unknown>)[moduleSettingName(name)];
    if (value !== undefined) picked[moduleSettingName(name)] = value;
  }
  return picked as ElectorSettingsAsGiven;
}

/**
 * The `LeaderElector` settings of an election's resolved options but the timings (the elector
 * takes `options.timings` beside them), by the elector's names: what the elector is built with,
 * unchanged (it checks them and applies its defaults).
 */
export function toElectorSettings(
  options: ResolvedElectionOptions,
): Partial<LeaderElectorSettings> & Pick<LeaderElectorSettings, 'identity'> {
  const settings: Record<string, unknown> = {};
  const given = options as unknown as Record<string, unknown>;
  for (const name of PASSED_SETTING_NAMES) settings[name] = given[moduleSettingName(name)];
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
