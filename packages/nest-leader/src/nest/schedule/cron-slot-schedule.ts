/**
 * A cron expression of `@Cron()` as a {@link SlotSchedule}, computed by the very `cron`
 * package `@nestjs/schedule` fires its jobs with (resolved from `@nestjs/schedule`'s own
 * folder), so the ledger's slots are exactly the ticks' times, time zones included.
 */
import { createRequire } from 'node:module';
import type { SlotSchedule } from '../../core/schedule-ledger/schedule-slots.js';
import { resolvePeerDependency } from '../../peers/peer-dependency.loader.js';

/** The part of `cron`'s `CronTime` used here (cron 3 and 4). */
interface CronTimeLike {
  timeZone?: string;
  getNextDateFrom(start: Date, timeZone?: string): { toJSDate(): Date };
}

type CronTimeClass = new (
  source: string,
  timeZone?: string | null,
  utcOffset?: number | null,
) => CronTimeLike;

let cronTimeClass: CronTimeClass | undefined;

/** `cron`'s `CronTime`, as `@nestjs/schedule` loads it. */
function loadCronTime(): CronTimeClass {
  if (cronTimeClass === undefined) {
    const fromSchedule = createRequire(resolvePeerDependency('@nestjs/schedule'));
    cronTimeClass = (fromSchedule('cron') as { CronTime: CronTimeClass }).CronTime;
  }
  return cronTimeClass;
}

/**
 * The slots of a cron expression, in `timeZone` or at `utcOffset` minutes from UTC (as
 * `@Cron(expression, { timeZone, utcOffset })`; neither: the system's time zone, as `cron`).
 * @throws whatever `cron` throws for an invalid expression, time zone or offset.
 */
export function cronSlotSchedule(
  expression: string,
  timeZone?: string,
  utcOffset?: number,
): SlotSchedule {
  const CronTime = loadCronTime();
  const cronTime =
    utcOffset === undefined
      ? new CronTime(expression, timeZone)
      : new CronTime(expression, null, utcOffset);
  const zone = utcOffset === undefined ? cronTime.timeZone : utcZone(utcOffset);
  return {
    nextAfter: (after) => cronTime.getNextDateFrom(after, zone).toJSDate(),
  };
}

/** `UTC+hh:mm` for an offset in minutes, as `cron` names it. */
function utcZone(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const hh = String(Math.trunc(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `UTC${sign}${hh}:${mm}`;
}
