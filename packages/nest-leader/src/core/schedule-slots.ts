/**
 * Which scheduled times ("slots") of a job fell due in a span of wall-clock time. Framework
 * free: a cron expression reaches this module as a {@link SlotSchedule} (the Nest side
 * adapts `@nestjs/schedule`'s `cron` package to it), an interval as {@link intervalSchedule}.
 */

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
    throw new RangeError(`periodMs must be a whole number of milliseconds > 0, got ${periodMs}`);
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
