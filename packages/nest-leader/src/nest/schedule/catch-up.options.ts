/**
 * The `catchUp` option of `@LeaderOnly()` and of `LeaderModule.forRoot()` (the default of every
 * leader-only scheduled job): checked when given, resolved against the election's timings.
 */
import {
  type CatchUpOptions,
  type CatchUpPolicy,
  DEFAULT_CATCH_UP_POLICY,
  DEFAULT_MAX_CATCH_UP,
  defaultHorizonMs,
} from '../../core/schedule-ledger/catch-up.policy.js';
import type { LeaderElectionTimings } from '../../core/leader-elector.options.js';
import { InvalidLeaderElectionOptionError } from '../../errors.js';
import { scheduleMessages } from './schedule.messages.js';

/**
 * What a new leader does about slots of a leader-only `@Cron`/`@Interval` job that fell due
 * while no leader ran them: a policy (see `CatchUpPolicy`: `'skip'`, `'once'`, `'all'`), or a
 * policy with its limits:
 * - `horizonMs`: a slot scheduled longer ago than this is never run late. Default: four crash
 *   failovers at the election's timings (`4 × (leaseDurationSeconds + 2.2 × retryPeriodSeconds)`),
 *   at least one minute — 77.6 s at the default 15/10/2 timings.
 * - `maxCatchUp`: under `'all'`, at most this many missed slots run (the newest). Default 100.
 */
export type CatchUpSetting =
  CatchUpPolicy | { policy: CatchUpPolicy; horizonMs?: number; maxCatchUp?: number };

const POLICIES: readonly unknown[] = ['skip', 'once', 'all'];

/**
 * Checks a `catchUp` setting as given; returns it unchanged.
 * @throws InvalidLeaderElectionOptionError naming `catchUp`, `catchUp.horizonMs` or
 *   `catchUp.maxCatchUp` and the rule.
 */
export function validateCatchUp(value: unknown, election?: string): CatchUpSetting | undefined {
  if (value === undefined || POLICIES.includes(value)) return value as CatchUpSetting | undefined;
  if (
    typeof value !== 'object' ||
    value === null ||
    !POLICIES.includes((value as { policy?: unknown }).policy)
  ) {
    throw new InvalidLeaderElectionOptionError(
      'catchUp',
      scheduleMessages.catchUpRule,
      value,
      election,
    );
  }
  const { horizonMs, maxCatchUp } = value as { horizonMs?: unknown; maxCatchUp?: unknown };
  if (horizonMs !== undefined && !(Number.isInteger(horizonMs) && (horizonMs as number) > 0)) {
    throw new InvalidLeaderElectionOptionError(
      'catchUp.horizonMs',
      scheduleMessages.horizonRule,
      horizonMs,
      election,
    );
  }
  if (maxCatchUp !== undefined && !(Number.isInteger(maxCatchUp) && (maxCatchUp as number) >= 1)) {
    throw new InvalidLeaderElectionOptionError(
      'catchUp.maxCatchUp',
      scheduleMessages.maxCatchUpRule,
      maxCatchUp,
      election,
    );
  }
  return value as CatchUpSetting;
}

/**
 * The catch-up of one job: its own setting, else the module's, else `'skip'`; limits not given
 * take the defaults for `timings`.
 */
export function resolveCatchUp(
  own: CatchUpSetting | undefined,
  moduleDefault: CatchUpSetting | undefined,
  timings: LeaderElectionTimings,
): CatchUpOptions {
  const setting = own ?? moduleDefault ?? DEFAULT_CATCH_UP_POLICY;
  const { policy, horizonMs, maxCatchUp } =
    typeof setting === 'string'
      ? { policy: setting, horizonMs: undefined, maxCatchUp: undefined }
      : setting;
  return {
    catchUp: policy,
    horizonMs:
      horizonMs ?? defaultHorizonMs(timings.leaseDurationSeconds, timings.retryPeriodSeconds),
    maxCatchUp: maxCatchUp ?? DEFAULT_MAX_CATCH_UP,
  };
}
