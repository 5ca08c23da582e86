/**
 * The records a candidate writes to renew its term, to take the Lease over for a new term, and
 * to create it — with the new term's fencing token (`leaseTransitions`). The election algorithm
 * decides when; this file says what is written. Framework-free.
 */

import type { AdvertisedCandidate } from '../../locks/advertised-candidates.js';
import type { LeaseRecord } from '../../locks/resource-lock.js';
import { withCandidate, withoutFormerHolder } from '../handoff/candidate-preference.js';
import { withoutOffer } from '../handoff/handoff-offer.js';
import { isHandoffTo, withoutHandoff } from '../handoff/leadership-handoff.js';
import { templateBackoffAfterTakeover } from '../handoff/newer-template-yield.js';

/** When a record is written and for how long it holds, as every term write has them. @internal */
export interface TermWrite {
  /** Wall-clock time of the write: `renewTime`, and `acquireTime` of a new term. */
  now: Date;
  /** The elector's leaseDuration, whole seconds. */
  leaseDurationSeconds: number;
}

/** How a new term's token continues from the record it replaces. @internal */
export interface TakeoverToken {
  /** Coordinated mode: continue from the highest `leaseTransitions` seen (see below). */
  coordinated: boolean;
  /** The highest `leaseTransitions` this candidate has seen, if any. */
  highestSeen: number | undefined;
  /** leaseTransitions + 1, wrapping to 0 past the int32 maximum. */
  next(value: number): number;
}

/**
 * `record` (this candidate's live term, as last read or written) renewed: holder,
 * `acquireTime` and `leaseTransitions` kept, `renewTime` now — as client-go's renewal.
 * @internal
 */
export function renewalRecord(record: LeaseRecord, write: TermWrite): LeaseRecord {
  return {
    ...record,
    leaseDurationSeconds: write.leaseDurationSeconds,
    renewTime: write.now,
    acquireTime: record.acquireTime ?? write.now,
  };
}

/**
 * `record` taken over by `identity` for a new term. Its token is `leaseTransitions + 1`, except
 * that a Lease handed to `identity` already counts this transition (the handoff wrote it, naming
 * it: one handover, one transition, as client-go's candidates count it too), and that in
 * coordinated mode it continues from the highest value seen (the election controller never
 * bumps `leaseTransitions` and may recreate the Lease at 0). A handoff marker and offer are
 * cleared, and the advertisement of the holder it is taken from (expired, or a handoff target
 * that never took it) is dropped. A holder of the newest pod template (other than
 * `podTemplateHash`) lost without a handoff is recorded as `templateBackoff`
 * (`templateBackoffAfterTakeover`).
 * @param podTemplateHash - the taking candidate's own pod template hash, if any
 * @internal
 */
export function takeoverRecord(
  record: LeaseRecord,
  identity: string,
  write: TermWrite,
  token: TakeoverToken,
  podTemplateHash?: string,
): LeaseRecord {
  const base = record.leaseTransitions;
  const leaseTransitions = isHandoffTo(record, identity)
    ? base
    : token.next(token.coordinated ? Math.max(base, token.highestSeen ?? 0) : base);
  const candidates = withoutFormerHolder(record, identity);
  const kept = { ...withoutOffer(withoutHandoff(record)), candidates };
  if (candidates === undefined) delete kept.candidates;
  const templateBackoff = templateBackoffAfterTakeover(record, identity, podTemplateHash);
  if (templateBackoff) kept.templateBackoff = templateBackoff;
  return {
    ...kept,
    holderIdentity: identity,
    leaseDurationSeconds: write.leaseDurationSeconds,
    acquireTime: write.now,
    renewTime: write.now,
    leaseTransitions,
  };
}

/**
 * The record that creates the Lease for `identity`: `leaseTransitions` 0, or one past the
 * highest seen (a recreated Lease continues the fencing token); with this candidate's
 * advertisement, if any (there is nothing to read it from yet).
 * @internal
 */
export function createdRecord(
  identity: string,
  write: TermWrite,
  leaseTransitions: number,
  advertisement: AdvertisedCandidate | undefined,
): LeaseRecord {
  const created: LeaseRecord = {
    holderIdentity: identity,
    leaseDurationSeconds: write.leaseDurationSeconds,
    acquireTime: write.now,
    renewTime: write.now,
    leaseTransitions,
  };
  if (advertisement) created.candidates = withCandidate([], advertisement);
  return created;
}
