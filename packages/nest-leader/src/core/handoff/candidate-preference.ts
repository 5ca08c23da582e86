/**
 * Whom a leader prefers to hand its Lease to, from what the candidates advertise
 * (`LeaseRecord.candidates`), and how the advertisement list is edited. Pure functions. The
 * preference is written once, on `preferredCandidate`; the rest of the library refers to it.
 */

import type { AdvertisedCandidate } from '../../locks/advertised-candidates.js';
import { MAX_ADVERTISED_CANDIDATES } from '../../locks/peer-bounds.js';
import type { LeaseRecord } from '../../locks/resource-lock.js';

export { MAX_ADVERTISED_CANDIDATES } from '../../locks/peer-bounds.js';

/**
 * The candidate to hand off to, or `undefined` when no one but `self` advertised. The
 * preference, in order:
 * 1. a candidate of the **newest pod template**: templates (candidates with the same
 *    `podTemplateHash`) are ranked by the earliest pod among their candidates, latest first
 *    (see `newestTemplate`). During a rollout the new template's first pod is created
 *    after the rollout began, while every older template's pods were created before. Candidates
 *    without a hash rank below every template;
 * 2. then the higher `priority`;
 * 3. then the earliest `startedAt` (the pod that has run longest is the least likely to be the
 *    next one replaced, and the most likely to be ready);
 * 4. then the identity, so every leader picks the same one.
 * Never the leader itself.
 * @param self - the leader's identity, never chosen
 */
export function preferredCandidate(
  candidates: readonly AdvertisedCandidate[] | undefined,
  self: string,
): AdvertisedCandidate | undefined {
  const others = (candidates ?? []).filter((c) => c.identity !== self);
  const newest = newestTemplate(others);
  const pool = newest === undefined ? others : others.filter((c) => c.podTemplateHash === newest);
  return pool.sort(byPreference)[0];
}

/**
 * The candidate a leader of `priority` yields to (`yieldToHigherPriority`): among those of a
 * higher priority, the {@link preferredCandidate}; `undefined` when there is none.
 */
export function higherPriorityCandidate(
  candidates: readonly AdvertisedCandidate[] | undefined,
  self: string,
  priority: number,
): AdvertisedCandidate | undefined {
  return preferredCandidate(
    candidates?.filter((c) => c.priority > priority),
    self,
  );
}

/**
 * The `podTemplateHash` whose earliest candidate is the latest; ties by the hash. A
 * candidate's age is its pod's `podCreationTimestamp`, else its `startedAt`: a container
 * restart renews `startedAt` but not the pod — an old template's pod whose container restarts
 * after a rollout's first new pod started must not make the old template look newest (its
 * leader would then never yield, and the rollout would wait on it for good).
 * `undefined` when no candidate has a hash.
 */
export function newestTemplate(candidates: readonly AdvertisedCandidate[]): string | undefined {
  const firstStartMs = new Map<string, number>();
  for (const candidate of candidates) {
    const { podTemplateHash } = candidate;
    if (podTemplateHash === undefined) continue;
    const ageMs = (candidate.podCreationTimestamp ?? candidate.startedAt).getTime();
    const known = firstStartMs.get(podTemplateHash);
    if (known === undefined || ageMs < known) firstStartMs.set(podTemplateHash, ageMs);
  }
  let newest: { hash: string; firstStartMs: number } | undefined;
  for (const [hash, startMs] of firstStartMs) {
    if (
      !newest ||
      startMs > newest.firstStartMs ||
      (startMs === newest.firstStartMs && hash > newest.hash)
    ) {
      newest = { hash, firstStartMs: startMs };
    }
  }
  return newest?.hash;
}

/** Higher priority first, then earlier start, then identity. */
function byPreference(a: AdvertisedCandidate, b: AdvertisedCandidate): number {
  return (
    b.priority - a.priority ||
    a.startedAt.getTime() - b.startedAt.getTime() ||
    (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0)
  );
}

/**
 * `candidates` with `entry` in place of any entry of the same identity, keeping at most
 * {@link MAX_ADVERTISED_CANDIDATES}: when over, the earliest-started others are dropped.
 */
export function withCandidate(
  candidates: readonly AdvertisedCandidate[] | undefined,
  entry: AdvertisedCandidate,
): AdvertisedCandidate[] {
  const others = (candidates ?? []).filter((c) => c.identity !== entry.identity);
  const excess = others.length + 1 - MAX_ADVERTISED_CANDIDATES;
  if (excess > 0) {
    const dropped = new Set(
      [...others].sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime()).slice(0, excess),
    );
    return [...others.filter((c) => !dropped.has(c)), entry];
  }
  return [...others, entry];
}

/**
 * `candidates` without `identity`'s entry; `undefined` when none is left (the Lease's
 * annotation is then removed).
 */
export function withoutCandidate(
  candidates: readonly AdvertisedCandidate[] | undefined,
  identity: string,
): AdvertisedCandidate[] | undefined {
  const left = (candidates ?? []).filter((c) => c.identity !== identity);
  return left.length > 0 ? left : undefined;
}

/** Whether `candidates` hold an entry equal to `entry`. */
export function advertises(
  candidates: readonly AdvertisedCandidate[] | undefined,
  entry: AdvertisedCandidate,
): boolean {
  return (candidates ?? []).some(
    (c) =>
      c.identity === entry.identity &&
      c.podTemplateHash === entry.podTemplateHash &&
      c.priority === entry.priority &&
      c.startedAt.getTime() === entry.startedAt.getTime() &&
      c.podCreationTimestamp?.getTime() === entry.podCreationTimestamp?.getTime(),
  );
}

/**
 * The candidates of `record` as a candidate taking it over writes them: without the entry of
 * the holder it takes the Lease from — a holder whose lease expired (crashed, stuck, cut off),
 * or the target of a handoff that was never taken (the record names it, and has expired — else
 * it would not be taken over): a later handoff must not be offered to it (a live one adds its
 * entry again when it sees it gone). Not after a release (no holder), nor from `self`.
 */
export function withoutFormerHolder(
  record: LeaseRecord,
  self: string,
): AdvertisedCandidate[] | undefined {
  const holder = record.holderIdentity;
  if (holder === '' || holder === self) return record.candidates;
  return withoutCandidate(record.candidates, holder);
}
