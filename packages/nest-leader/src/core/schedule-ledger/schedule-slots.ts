/**
 * Which scheduled times ("slots") of a job fell due in a span of wall-clock time. Framework
 * free: a cron expression reaches this module as a {@link SlotSchedule} (the Nest side
 * adapts `@nestjs/schedule`'s `cron` package to it), an interval as {@link intervalSchedule}.
 */

import { scheduleLedgerMessages } from './schedule-ledger.messages.js';

/** The scheduled times of one job, as a sequence: each call gives the next one. */
export interface SlotSchedule {
  /**
   * The first scheduled time strictly after `after` (wall clock), or `undefined` when the
   * schedule has no further time (a one-off timeout that already fired).
   */
  nextAfter(after: Date): Date | undefined;
}

/**
 * The slots of a fixed-rate job (`@Interval(periodMs)`): `anchor`, `anchor + periodMs`, …
 * Before the anchor there is no slot.
 * @param periodMs - the interval in milliseconds; a whole number > 0
 * @param anchor - the wall-clock time of one slot (e.g. the Unix epoch, so every replica
 *   computes the same slots for the same period)
 * @throws RangeError if `periodMs` is not a whole number > 0
 */
export function intervalSchedule(periodMs: number, anchor: Date = new Date(0)): SlotSchedule {
  if (!Number.isInteger(periodMs) || periodMs <= 0) {
    throw new RangeError(scheduleLedgerMessages.intervalPeriod(periodMs));
  }
  const anchorMs = anchor.getTime();
  return {
    nextAfter(after: Date): Date {
      const sinceAnchorMs = after.getTime() - anchorMs;
      if (sinceAnchorMs < 0) return new Date(anchorMs);
      return new Date(anchorMs + (Math.floor(sinceAnchorMs / periodMs) + 1) * periodMs);
    },
  };
}

/** The slots found in a span, oldest first, and how many more there were past the limit. */
export interface DueSlots {
  /** Scheduled times in the span, oldest first; at most `limit` of the newest. */
  slots: Date[];
  /** Slots in the span left out because there were more than `limit` (the oldest ones). */
  omitted: number;
}

/**
 * The slots of `schedule` in the span (`afterExclusive`, `untilInclusive`], oldest first.
 * Only the newest `limit` are returned; the older ones are counted in `omitted` (counting
 * stops at `countCap`, so a years-old ledger does not walk millions of slots).
 */
export function dueSlots(
  schedule: SlotSchedule,
  afterExclusive: Date,
  untilInclusive: Date,
  limit: number,
  countCap = 100_000,
): DueSlots {
  const slots: Date[] = [];
  let omitted = 0;
  let cursor = schedule.nextAfter(afterExclusive);
  let seen = 0;
  while (cursor !== undefined && cursor.getTime() <= untilInclusive.getTime() && seen < countCap) {
    slots.push(cursor);
    if (slots.length > limit) {
      slots.shift();
      omitted += 1;
    }
    seen += 1;
    cursor = schedule.nextAfter(cursor);
  }
  return { slots, omitted };
}

/**
 * How far ahead of a slot a tick may fire and still count as that slot's run, in ms: timers
 * rounded to the millisecond (setTimeout, `cron`) can fire a hair early, never by much. Small
 * against any schedule's period (a cron's finest is one second), so a second tick within a
 * slot is never taken for the next one.
 */
export const EARLY_TICK_TOLERANCE_MS = 50;

/**
 * The slot an on-time tick at `now` runs: the newest scheduled time at or before `now` (a
 * tick that fires late still runs the slot it was scheduled for) — unless that slot was
 * already begun in this term (`begun`) and the next one is at most
 * {@link EARLY_TICK_TOLERANCE_MS} ahead, i.e. the timer fired a little early. `undefined`
 * when the schedule has no slot at or before `now` within `lookbackMs`.
 * @param lookbackMs - how far back to look for the slot (a tick later than this is no slot's)
 */
export function slotOfTick(
  schedule: SlotSchedule,
  now: Date,
  begun: (slot: Date) => boolean,
  lookbackMs: number,
): Date | undefined {
  const nowMs = now.getTime();
  let slot: Date | undefined;
  // Widen the window until it holds a slot, so a sparse cron walks few times and a
  // per-second one walks at most a couple.
  for (let windowMs = 1000; slot === undefined; windowMs *= 4) {
    const span = Math.min(windowMs, lookbackMs);
    slot = newestAtOrBefore(schedule, new Date(nowMs - span), now);
    if (span === lookbackMs) break;
  }
  if (slot !== undefined && !begun(slot)) return slot;
  const next = schedule.nextAfter(slot ?? new Date(nowMs - lookbackMs));
  if (next !== undefined && next.getTime() - nowMs <= EARLY_TICK_TOLERANCE_MS) return next;
  return slot;
}

/** The newest slot in [`from`, `until`], or `undefined`. */
function newestAtOrBefore(schedule: SlotSchedule, from: Date, until: Date): Date | undefined {
  let newest: Date | undefined;
  let cursor = schedule.nextAfter(new Date(from.getTime() - 1));
  while (cursor !== undefined && cursor.getTime() <= until.getTime()) {
    newest = cursor;
    cursor = schedule.nextAfter(cursor);
  }
  return newest;
}
