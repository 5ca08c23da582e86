/**
 * Reads what the schedule ledger needs of a `@LeaderOnly()` method that `@nestjs/schedule`
 * runs: its job name and its slots. Recurring jobs only: a `@Cron` with an expression, an
 * `@Interval`. A `@Timeout` fires once per replica at its own start-up, and a `@Cron` of a
 * fixed date is a one-off: neither has slots the replicas share, so the ledger leaves them out.
 */
import { intervalSchedule, type SlotSchedule } from '../../core/schedule-ledger/schedule-slots.js';
import { SCHEDULE_METADATA } from '../leader.constants.js';
import { cronSlotSchedule } from './cron-slot-schedule.js';

/** The recurring schedule of one leader-only job, as `@Cron`/`@Interval` declared it. */
export interface JobSchedule {
  /** The job's name: `@Cron`'s `name` / `@Interval`'s name if given, else `Class.method`. */
  readonly job: string;
  readonly kind: 'cron' | 'interval';
  /** The cron expression, or the interval in ms, as declared (for messages). */
  readonly declared: string;
  readonly slots: SlotSchedule;
  /** How late a tick may come and still be its slot's, in ms. */
  readonly lookbackMs: number;
}

interface CronOptions {
  cronTime?: unknown;
  timeZone?: string;
  utcOffset?: number;
}

/** How far back a cron tick's slot is looked for: a tick later than this has none. */
const CRON_LOOKBACK_MS = 60_000;

/**
 * The recurring schedule of `method` (a `@LeaderOnly()` wrapper), or `undefined` when
 * `@nestjs/schedule` does not run it as a recurring job.
 * @param handler - `Class.method`, the job's name when the decorator gives none
 * @throws whatever `cron` throws for an expression it cannot read
 */
export function readJobSchedule(method: object, handler: string): JobSchedule | undefined {
  const type: unknown = Reflect.getMetadata(SCHEDULE_METADATA.type, method);
  const name: unknown = Reflect.getMetadata(SCHEDULE_METADATA.name, method);
  const job = typeof name === 'string' && name !== '' ? name : handler;
  if (type === SCHEDULE_METADATA.cronType) {
    const options = Reflect.getMetadata(SCHEDULE_METADATA.cronOptions, method) as CronOptions;
    if (typeof options?.cronTime !== 'string') return undefined;
    return {
      job,
      kind: 'cron',
      declared: options.cronTime,
      slots: cronSlotSchedule(options.cronTime, options.timeZone, options.utcOffset),
      lookbackMs: CRON_LOOKBACK_MS,
    };
  }
  if (type === SCHEDULE_METADATA.intervalType) {
    const { timeout } = Reflect.getMetadata(SCHEDULE_METADATA.intervalOptions, method) as {
      timeout?: unknown;
    };
    if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout <= 0) return undefined;
    // Slots on the epoch grid: every replica numbers them alike, whenever it started.
    return {
      job,
      kind: 'interval',
      declared: `${timeout} ms`,
      slots: intervalSchedule(timeout),
      lookbackMs: timeout,
    };
  }
  return undefined;
}
