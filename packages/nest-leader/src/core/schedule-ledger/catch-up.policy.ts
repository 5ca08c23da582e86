/**
 * What a new leader does about the slots of a job that fell due while nobody (or a leader
 * that died before completing them) ran them: the catch-up policies and the pure planner.
 */
import { dueSlots, type SlotSchedule } from './schedule-slots.js';
import type { JobLedgerEntry } from './schedule-ledger.js';

/**
 * How a new leader treats missed slots of a job:
 * - `'skip'`: never run late (the behaviour before the ledger; the default);
 * - `'once'`: run the newest missed slot once, however many were missed;
 * - `'all'`: run every missed slot, oldest first, at most `maxCatchUp` (the newest ones).
 * Slots older than `horizonMs` are never run late under any policy.
 */
export type CatchUpPolicy = 'skip' | 'once' | 'all';

/** The catch-up policy of one job with its limits. */
export interface CatchUpOptions {
  /** See {@link CatchUpPolicy}; default `'skip'`. */
  catchUp: CatchUpPolicy;
  /** A slot scheduled more than this many milliseconds before now is never run late. */
  horizonMs: number;
  /** Under `'all'`, at most this many missed slots are run (the newest); a whole number ≥ 1. */
  maxCatchUp: number;
}

/** The default policy: `'skip'`, because a job written before the ledger may not be safe to run late. */
export const DEFAULT_CATCH_UP_POLICY: CatchUpPolicy = 'skip';

/** Default {@link CatchUpOptions.maxCatchUp}. */
export const DEFAULT_MAX_CATCH_UP = 100;

/** Smallest default horizon, in ms: one minute. */
const MIN_DEFAULT_HORIZON_MS = 60_000;

/**
 * The default horizon for an election's timings: four crash failovers' worth (a crash
 * failover takes up to `leaseDurationSeconds` plus an acquire retry of up to
 * 2.2 × `retryPeriodSeconds`), and at least one minute. 15 s / 2 s timings give 77.6 s.
 */
export function defaultHorizonMs(leaseDurationSeconds: number, retryPeriodSeconds: number): number {
  const crashFailoverMs = (leaseDurationSeconds + 2.2 * retryPeriodSeconds) * 1000;
  return Math.max(MIN_DEFAULT_HORIZON_MS, Math.ceil(4 * crashFailoverMs));
}

/** What a new leader should do about one job's missed slots, and why. */
export interface CatchUpPlan {
  /** Slots to run now, oldest first (each a late run). */
  run: Date[];
  /** The slot the previous leader started and did not complete, if it is among `run` (a redo). */
  redo: Date | undefined;
  /** Missed slots within the horizon the policy does not run (skip, or beyond once/maxCatchUp). */
  skipped: number;
  /** Missed slots older than the horizon (never run late); counting stops at 100,000. */
  expired: number;
}

/**
 * Plans a new leader's catch-up for one job: the slots of `schedule` after the ledger's
 * completion watermark up to `now` (inclusive) are missed; those within `horizonMs` are run
 * according to the policy. A job without a completion in the ledger has no missed slots (the
 * ledger starts remembering when the job first completes).
 * @param now - the wall-clock time of the plan, usually when the term began
 */
export function planCatchUp(
  schedule: SlotSchedule,
  entry: JobLedgerEntry | undefined,
  now: Date,
  options: CatchUpOptions,
): CatchUpPlan {
  const watermark = entry?.lastCompleted?.scheduledAt;
  if (watermark === undefined) return { run: [], redo: undefined, skipped: 0, expired: 0 };
  const horizonStart = new Date(now.getTime() - options.horizonMs);
  // Slots in (watermark, horizonStart) are expired, those in [horizonStart, now] are missed.
  const expiredEnd = new Date(horizonStart.getTime() - 1);
  const expired =
    watermark.getTime() < expiredEnd.getTime()
      ? dueSlots(schedule, watermark, expiredEnd, 0).omitted
      : 0;
  const missedAfter = watermark.getTime() > expiredEnd.getTime() ? watermark : expiredEnd;
  const limit = options.catchUp === 'all' ? options.maxCatchUp : 1;
  const { slots, omitted } = dueSlots(schedule, missedAfter, now, limit);
  const run = options.catchUp === 'skip' ? [] : slots;
  const skipped = omitted + (slots.length - run.length);
  const started = entry?.lastStarted;
  const redo =
    started !== undefined && run.some((slot) => slot.getTime() === started.scheduledAt.getTime())
      ? started.scheduledAt
      : undefined;
  return { run, redo, skipped, expired };
}
