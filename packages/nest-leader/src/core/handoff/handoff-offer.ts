/**
 * The handoff offer: how a leader proves a candidate alive before it hands the Lease to it.
 * Framework-free; pure functions (the requests are in `handoff-offer.session.ts`).
 *
 * 1. **Offer.** The leader, still leading and renewing, writes `LeaseRecord.handoffOffer`
 *    (`{to, toStartedAt: the start its advertisement gave, from: itself, leaseTransitions: its
 *    term's}`, the Lease annotation `nest-leader/handoff-offer`), keeping the election record
 *    exactly as read.
 * 2. **Accept.** The candidate `to`, a follower watching (or polling) the Lease, sees an offer
 *    naming it — and its own incarnation: a container restarted in the same pod keeps the
 *    identity but not the start, and never accepts what its crashed predecessor's settled
 *    advertisement drew — from the record's holder at the record's transitions, and writes it back with
 *    `accepted: true` — again only the annotation, the election record exactly as read, so no
 *    candidate (ours or client-go's) takes the write for a renewal. A conflict (the leader
 *    renewed in between; renewals carry the offer along) means read and try again.
 * 3. **Hand off.** The leader, reading every {@link offerPollMs} while (and only while) the
 *    offer is open, sees the acceptance: it ends its term, drains, and writes the handoff record
 *    (`leadership-handoff.ts`), which clears the offer. No acceptance within
 *    {@link offerWindowMs}: the leader removes the offer and the candidate's advertisement in
 *    one write — unless that write's read finds it accepted after all — and, with more
 *    candidates to choose from, offers the next one; the term goes on meanwhile.
 *
 * A dead candidate therefore costs one offer window of the leader's shutdown time, never
 * leaderless time. An offer is stale — ignored by everyone — once the record names another
 * holder or other transitions: only the leader of the current term can have written a live one,
 * so offers of two leaders cannot both be live. Steady state has no offer and no extra request.
 */

import type { AdvertisedCandidate } from '../../locks/advertised-candidates.js';
import type { LeaseHandoffOffer, LeaseRecord } from '../../locks/resource-lock.js';
import { withoutCandidate } from './candidate-preference.js';

/**
 * How long a leader waits for the candidate it offered the Lease to accept, ms:
 * `max(1 s, 2 × retryPeriod)` — 4 s at the defaults. A watching candidate answers within one
 * round trip of seeing the offer (tens of ms); a polling one reads every retryPeriod × [1, 1.2),
 * so twice the retryPeriod covers its longest wait plus its read and its write with margin on a
 * loaded API server. The floor keeps short test timings from mistaking a slow round trip for a
 * dead candidate. The leader leads on meanwhile: the window costs shutdown time, not leadership.
 */
export function offerWindowMs(retryPeriodMs: number): number {
  return Math.max(1000, 2 * retryPeriodMs);
}

/**
 * How often a leader reads the record while an offer is open, ms: a quarter of the window, at
 * most 250 ms — an acceptance costs the next leader at most that much more leaderless time.
 */
export function offerPollMs(retryPeriodMs: number): number {
  return Math.min(250, offerWindowMs(retryPeriodMs) / 4);
}

/**
 * How long, whole seconds, the handoff record reserves the Lease for a target that accepted an
 * offer: the offer window rounded up (4 s at the defaults), or `boundSeconds` (the handoff's
 * own bound) when that is shorter. An accepted target reads the record every offer poll (a
 * quarter of the window, at most 250 ms) or watches it until the handoff comes, so it takes the
 * Lease within a poll and a write; one that died between its acceptance and the handoff — the
 * one moment an offer cannot cover — then costs the others this much, not a whole
 * leaseDuration. Safe at any length: the target takes the Lease, and another candidate the
 * expired reservation, each with a write over the handoff's version, so at most one of them
 * succeeds; whoever loses never begins a term. The `nest-leader-elector` sidecar answers a
 * transfer with this figure.
 * @param retryPeriodMs - the election's retryPeriod, ms
 * @param boundSeconds - the handoff's own bound (its `leaseDurationSeconds`), whole seconds
 * @returns the reservation written for an accepted target, whole seconds
 */
export function acceptedHandoffSeconds(retryPeriodMs: number, boundSeconds: number): number {
  return Math.min(boundSeconds, Math.ceil(offerWindowMs(retryPeriodMs) / 1000));
}

/**
 * At most this many offers are made for one handoff (candidates that do not answer are
 * removed, then the next is offered): a stop then costs at most this many windows beyond its
 * drain (16 s at the defaults) before it releases the Lease instead.
 */
export const MAX_OFFERS_PER_HANDOFF = 4;

/** What an offer is, before any acceptance: to whom (which incarnation), from whom, which term. */
export type OfferTerms = Omit<LeaseHandoffOffer, 'accepted'>;

/** The offer `from` (at `leaseTransitions`) makes to `to`, written on `record`. */
export function withOffer(record: LeaseRecord, offer: OfferTerms): LeaseRecord {
  return { ...record, handoffOffer: { ...offer } };
}

/** `record` without an offer (every handoff, release and takeover write drops it). */
export function withoutOffer(record: LeaseRecord): LeaseRecord {
  if (record.handoffOffer === undefined) return record;
  const { handoffOffer: _offer, ...rest } = record;
  return rest;
}

/** True when the offer is live on `record`: written by its holder at its transitions. */
function isLive(record: LeaseRecord, offer: LeaseHandoffOffer): boolean {
  return (
    offer.from === record.holderIdentity &&
    offer.leaseTransitions === record.leaseTransitions &&
    offer.to !== record.holderIdentity
  );
}

/** The live offer on `record`, not accepted yet, to `identity` (any incarnation). */
function liveOfferTo(
  record: LeaseRecord | undefined,
  identity: string,
): LeaseHandoffOffer | undefined {
  const offer = record?.handoffOffer;
  if (offer === undefined || offer.to !== identity || offer.accepted) return undefined;
  return isLive(record!, offer) ? offer : undefined;
}

/**
 * True when `record` carries a live offer, not accepted yet, to `identity` started at
 * `startedAt` (its advertisement's start): an offer naming another start was earned by another
 * incarnation of the same identity (see the file's description). An offer without a start
 * (older versions) names any incarnation.
 */
export function isOpenOfferTo(
  record: LeaseRecord | undefined,
  identity: string,
  startedAt: Date | undefined,
): boolean {
  const offer = liveOfferTo(record, identity);
  return offer !== undefined && !namesOtherIncarnation(offer, startedAt);
}

/**
 * The start of the incarnation of `identity` that a live, unaccepted offer on `record` names,
 * when that is not `startedAt`: an offer this candidate must ignore; `undefined` otherwise.
 */
export function offerToOtherIncarnation(
  record: LeaseRecord | undefined,
  identity: string,
  startedAt: Date | undefined,
): Date | undefined {
  const offer = liveOfferTo(record, identity);
  return offer !== undefined && namesOtherIncarnation(offer, startedAt)
    ? offer.toStartedAt
    : undefined;
}

function namesOtherIncarnation(offer: LeaseHandoffOffer, startedAt: Date | undefined): boolean {
  return offer.toStartedAt !== undefined && offer.toStartedAt.getTime() !== startedAt?.getTime();
}

/**
 * True when `record` carries the acceptance of the offer `holder` (at `leaseTransitions`) made
 * to `to`.
 */
export function isAccepted(record: LeaseRecord, offer: OfferTerms): boolean {
  const stored = record.handoffOffer;
  return (
    stored?.accepted === true &&
    stored.to === offer.to &&
    stored.from === offer.from &&
    stored.leaseTransitions === offer.leaseTransitions &&
    isLive(record, stored)
  );
}

/**
 * True when `identity` accepted the live offer on `record` and awaits the handoff: a polling
 * candidate then reads every {@link offerPollMs} until it comes (it follows within one poll).
 */
export function awaitsHandoff(record: LeaseRecord | undefined, identity: string): boolean {
  const offer = record?.handoffOffer;
  return offer?.accepted === true && offer.to === identity && isLive(record!, offer);
}

/** `record` (with an open offer to its writer) with that offer accepted. */
export function acceptedRecord(record: LeaseRecord): LeaseRecord {
  return { ...record, handoffOffer: { ...record.handoffOffer!, accepted: true } };
}

/**
 * `record` after an unanswered offer to `to`: without the offer and without `to`'s
 * advertisement (it did not answer: gone, or too slow to be handed the Lease).
 */
export function withoutUnansweredTarget(record: LeaseRecord, to: string): LeaseRecord {
  const closed = withoutOffer(record);
  const candidates: AdvertisedCandidate[] | undefined = withoutCandidate(record.candidates, to);
  if (candidates) return { ...closed, candidates };
  const { candidates: _candidates, ...rest } = closed;
  return rest;
}
