/**
 * The one overlap check of "never two leaders at once", for every judge of leadership logs: the
 * demo's summary (`checkLeaderTerms`), the chaos checker, and the candidate harness of the
 * interop tests (client-go, Python). Framework-free and pure, so the tests import it from the
 * demo (which owns it: the demo cannot import the tests).
 */

/** When one owner (a candidate, a term) led, ms on one clock. */
export interface LeadershipSpan {
  /** Spans of one owner never count as overlapping each other. */
  owner: string;
  startMs: number;
  endMs: number;
}

/**
 * Whether two spans that only touch (one ends the very ms the other starts) overlap:
 * `overlap` for log times of ms resolution, where one ms cannot be ordered; `apart` for times
 * that can (sub-ms monotonic stamps) or when touching means handed over.
 */
export type Touching = 'overlap' | 'apart';

/**
 * Pairs `[earlier, later]` (by start) of items of different owners whose spans overlap in time,
 * ordered by the later item, then the earlier one (stable for items that start together).
 */
export function overlappingSpans<T>(
  items: readonly T[],
  spanOf: (item: T) => LeadershipSpan,
  touching: Touching,
): [T, T][] {
  const sorted = items
    .map((item) => ({ item, span: spanOf(item) }))
    .sort((a, b) => a.span.startMs - b.span.startMs);
  const overlap =
    touching === 'overlap'
      ? (a: LeadershipSpan, b: LeadershipSpan) => a.startMs <= b.endMs && b.startMs <= a.endMs
      : (a: LeadershipSpan, b: LeadershipSpan) => a.startMs < b.endMs && b.startMs < a.endMs;
  const pairs: [T, T][] = [];
  for (let j = 1; j < sorted.length; j++) {
    const later = sorted[j]!;
    for (let i = 0; i < j; i++) {
      const earlier = sorted[i]!;
      if (earlier.span.owner !== later.span.owner && overlap(earlier.span, later.span)) {
        pairs.push([earlier.item, later.item]);
      }
    }
  }
  return pairs;
}
