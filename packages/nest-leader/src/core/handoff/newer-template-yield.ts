/**
 * When a running leader yields to a candidate of a newer pod template (`yieldToNewerTemplate`):
 * a rollout's new pod takes over from the old leader, which keeps leading until then — so a
 * Deployment may keep the old leader while its new pods start (`maxUnavailable` below 100 %),
 * and a new template that never starts takes nothing from it. Two guards against a broken new
 * template:
 * - **settle**: only a candidate whose advertisement this leader has seen unchanged for
 *   `newerTemplateSettleSeconds` is yielded to. A pod that crashes and restarts advertises
 *   again with a new `startedAt`, one that stops (a failed liveness probe) withdraws: either
 *   starts its settle over.
 * - **backoff**: a candidate that takes over a Lease whose holder was of the newest template
 *   and was lost without a handoff (expired, or handed to and never taken) records that
 *   template on the Lease (`LeaseRecord.templateBackoff`); no leader yields to it again until
 *   a backoff ({@link templateBackoffMs}, doubling with each loss in a row) has passed since it
 *   first saw that record. Times are this process's monotonic clock, never the record's.
 * Framework-free.
 */

import type { AdvertisedCandidate } from '../../locks/advertised-candidates.js';
import type { LeaseRecord, TemplateBackoff } from '../../locks/resource-lock.js';
import { newestTemplate, preferredCandidate } from './candidate-preference.js';
import type { Clock } from '../clock.js';
import { isHandoffTo } from './leadership-handoff.js';

/** The backoff after a newer template's first lost leader, ms (5 min). */
export const TEMPLATE_BACKOFF_BASE_MS = 5 * 60_000;
/** The longest backoff, ms (1 h). */
export const TEMPLATE_BACKOFF_MAX_MS = 60 * 60_000;

/** The backoff after `failures` lost leaders of one template in a row: 5 min doubling to 1 h. */
export function templateBackoffMs(failures: number): number {
  const doublings = Math.max(0, Math.min(failures - 1, 10));
  return Math.min(TEMPLATE_BACKOFF_BASE_MS * 2 ** doublings, TEMPLATE_BACKOFF_MAX_MS);
}

/**
 * The candidates of a newer pod template than `self`'s: those of the newest template
 * (`newestTemplate`, with `self` counted in its own), when that is not `self`'s. Empty when
 * `self` has no hash or its template is the newest.
 */
export function newerTemplateCandidates(
  candidates: readonly AdvertisedCandidate[] | undefined,
  self: AdvertisedCandidate,
): AdvertisedCandidate[] {
  const own = self.podTemplateHash;
  if (own === undefined) return [];
  const others = (candidates ?? []).filter((c) => c.identity !== self.identity);
  const newest = newestTemplate([...others, self]);
  if (newest === undefined || newest === own) return [];
  return others.filter((c) => c.podTemplateHash === newest);
}

/**
 * The `templateBackoff` a candidate writes when it takes `record` over (see the file's
 * description): a new or counted-up one when the record's holder — not `identity`, not
 * released, not handed to `identity` — advertised the newest template, other than `ownHash`;
 * else the record's own, unchanged.
 */
export function templateBackoffAfterTakeover(
  record: LeaseRecord,
  identity: string,
  ownHash: string | undefined,
): TemplateBackoff | undefined {
  const kept = record.templateBackoff;
  const holder = record.holderIdentity;
  if (holder === '' || holder === identity || isHandoffTo(record, identity)) return kept;
  const candidates = record.candidates ?? [];
  const lost = candidates.find((c) => c.identity === holder)?.podTemplateHash;
  if (lost === undefined || lost === ownHash) return kept;
  // The candidates as advertised, this one included (its own entry, if written).
  const newest = newestTemplate(candidates);
  if (newest !== lost) return kept;
  const failures = kept?.podTemplateHash === lost ? kept.failures + 1 : 1;
  return { podTemplateHash: lost, failures };
}

/** What {@link NewerTemplateYield.consider} decided. */
export type NewerTemplateDecision =
  | { yieldTo: AdvertisedCandidate }
  /** A newer template advertises, but it is backed off for `remainingMs` more. */
  | { backedOff: TemplateBackoff; remainingMs: number }
  | undefined;

/**
 * One leader's view of the newer-template candidates across its renewals: when each
 * advertisement was first seen unchanged, and when each template backoff was first seen.
 * @internal
 */
export class NewerTemplateYield {
  /** identity → the advertisement's `startedAt` and when this leader first saw it, ms. */
  private readonly seen = new Map<string, { startedAtMs: number; sinceMs: number }>();
  private backoff: (TemplateBackoff & { sinceMs: number }) | undefined;
  /** leaseTransitions of the term whose records {@link seen} comes from. */
  private term: number | undefined;

  /**
   * @param self - this leader's advertisement (with its `podTemplateHash`)
   * @param settleMs - how long an advertisement must be seen unchanged
   */
  constructor(
    private readonly self: AdvertisedCandidate,
    private readonly settleMs: number,
    private readonly clock: Clock,
  ) {}

  /**
   * Takes in `record` (as last read or written by the live term; a record of another term
   * starts the settle times over) and decides: the candidate to
   * yield to — among the newer template's candidates seen unchanged for the settle time, the
   * preferred one — unless that template is backed off; `undefined` when none.
   */
  consider(record: LeaseRecord): NewerTemplateDecision {
    const nowMs = this.clock.nowMs();
    if (record.leaseTransitions !== this.term) {
      // A new term: between terms this candidate saw no records, so nothing proves that an
      // advertisement seen in an earlier term stayed (its process may have died since).
      this.seen.clear();
      this.term = record.leaseTransitions;
    }
    const newer = newerTemplateCandidates(record.candidates, this.self);
    this.track(newer, nowMs);
    const marker = record.templateBackoff;
    if (
      !this.backoff ||
      !marker ||
      this.backoff.podTemplateHash !== marker.podTemplateHash ||
      this.backoff.failures !== marker.failures
    ) {
      this.backoff = marker ? { ...marker, sinceMs: nowMs } : undefined;
    }
    const settled = newer.filter(
      (c) => nowMs - this.seen.get(c.identity)!.sinceMs >= this.settleMs,
    );
    if (settled.length === 0) return undefined;
    const hash = settled[0]!.podTemplateHash!;
    if (this.backoff?.podTemplateHash === hash) {
      const remainingMs = this.backoff.sinceMs + templateBackoffMs(this.backoff.failures) - nowMs;
      if (remainingMs > 0) {
        const { podTemplateHash, failures } = this.backoff;
        return { backedOff: { podTemplateHash, failures }, remainingMs };
      }
    }
    const to = preferredCandidate(settled, this.self.identity);
    return to && { yieldTo: to };
  }

  /** Remembers when each of `newer` was first seen as it is now; forgets the rest. */
  private track(newer: readonly AdvertisedCandidate[], nowMs: number): void {
    const present = new Set<string>();
    for (const { identity, startedAt } of newer) {
      present.add(identity);
      const known = this.seen.get(identity);
      if (!known || known.startedAtMs !== startedAt.getTime()) {
        this.seen.set(identity, { startedAtMs: startedAt.getTime(), sinceMs: nowMs });
      }
    }
    for (const identity of this.seen.keys()) if (!present.has(identity)) this.seen.delete(identity);
  }
}
