/** Message texts of the schedule ledger's Nest side: the `catchUp` option and catch-up logs. */
import type { CatchUpPlan } from '../../core/schedule-ledger/catch-up.policy.js';
import { errorText } from '../../format.js';

const iso = (date: Date): string => date.toISOString();

export const scheduleMessages = {
  catchUpRule:
    "must be 'skip', 'once' or 'all', or { policy: 'skip' | 'once' | 'all', horizonMs?, maxCatchUp? }",
  horizonRule: 'must be a whole number of milliseconds > 0',
  maxCatchUpRule: 'must be a whole number ≥ 1',

  /** A new leader found missed slots of a job: what it runs late, redoes, skips. */
  catchingUp: (
    election: string,
    job: string,
    policy: string,
    plan: CatchUpPlan,
    lastCompleted: { scheduledAt: Date; token: number } | undefined,
  ): string => {
    const missed = plan.run.length + plan.skipped + plan.expired;
    const since = lastCompleted
      ? ` since ${iso(lastCompleted.scheduledAt)} (the last slot completed, by term ${lastCompleted.token})`
      : '';
    const running =
      plan.run.length === 0
        ? 'running none late'
        : `running ${plan.run.length} late (${iso(plan.run[0]!)}${plan.run.length > 1 ? ` … ${iso(plan.run.at(-1)!)}` : ''})`;
    const redo = plan.redo
      ? `, redoing ${iso(plan.redo)}, begun by a leader that did not complete it`
      : '';
    return (
      `Election "${election}": job ${job} missed ${missed} scheduled slot(s)${since}; ` +
      `catchUp '${policy}': ${running}${redo}; ${plan.skipped} skipped by the policy, ` +
      `${plan.expired} past the horizon.`
    );
  },

  /** A recurring schedule the ledger cannot follow (e.g. an invalid expression): no catch-up. */
  unreadableSchedule: (job: string, error: unknown): string =>
    `The schedule of leader-only job ${job} could not be read (${errorText(error)}); ` +
    'it runs on the leader as before, without the schedule ledger (no catch-up after a failover).',

  /** The stored ledger was corrupt or foreign. */
  storedLedgerProblem: (election: string, problem: string): string =>
    `Election "${election}": ${problem}.`,

  /** A catch-up run threw or rejected. */
  catchUpFailed: (job: string, scheduledAt: Date, error: unknown): string =>
    `The late run of ${job} for ${iso(scheduledAt)} failed: ${errorText(error)}`,
} as const;
