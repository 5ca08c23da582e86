/**
 * One elector's side of targeted handoffs: as leader, the transfer (end the term and drain it,
 * stop renewing, write the handoff); as candidate, the recognition of a Lease handed to it.
 * The handoff record and its marker are in `leadership-handoff.ts`. Framework-free.
 */

import { LeadershipTransferError } from '../../errors.js';
import type { AdvertisedCandidate } from '../../locks/advertised-candidates.js';
import type { LeaseRecord, TemplateBackoff } from '../../locks/resource-lock.js';
import { higherPriorityCandidate, preferredCandidate } from './candidate-preference.js';
import { timeoutSignal } from '../clock.js';
import { preferredSuccessor } from './coordinated-election.js';
import { coordinatedMessages } from './coordinated-election.messages.js';
import {
  acceptedHandoffSeconds,
  awaitsHandoff,
  isOpenOfferTo,
  offerPollMs,
  offerToOtherIncarnation,
} from './handoff-offer.js';
import { offerMessages } from './handoff-offer.messages.js';
import type { HandoffOffers, OfferingTerm } from './handoff-offer.session.js';
import type { ResolvedLeaderElectorOptions } from '../leader-elector.options.js';
import type { LeaderTermLifetime } from '../leader-term.js';
import {
  handoffLeaseDurationSeconds,
  type HandoffWriter,
  isHandoffTo,
  type TransferLeadershipOptions,
  validateHandoffTarget,
  writeHandoff,
} from './leadership-handoff.js';
import { handoffMessages } from './leadership-handoff.messages.js';
import { NewerTemplateYield } from './newer-template-yield.js';

/** The elector's settings a handoff session uses. @internal */
export type HandoffSessionConfig = Pick<
  ResolvedLeaderElectorOptions,
  | 'identity'
  | 'clock'
  | 'logger'
  | 'leaseDurationMs'
  | 'renewDeadlineMs'
  | 'advertisement'
  | 'yieldToHigherPriority'
  | 'yieldToNewerTemplate'
  | 'newerTemplateSettleMs'
>;

/** What a handoff session needs of the elector besides its settings. @internal */
export interface HandoffSessionHost extends HandoffWriter {
  /** Ends the current term, if any, and awaits its drain (`onStoppedLeading`). */
  endTerm(): Promise<void>;
  /** The record as last read or written (its advertisements: whom an offer can ask). */
  latest?(): LeaseRecord | undefined;
}

/**
 * The targeted handoffs of one elector (see `LeaderElector.transferLeadership`).
 * @internal
 */
export class LeadershipHandoffSession {
  private underWay: Promise<void> | undefined;
  /** With `yieldToNewerTemplate` and a `podTemplateHash`: when to yield to a newer template. */
  private readonly newerTemplate: NewerTemplateYield | undefined;
  /** The template backoff last logged, so each is logged once (`hash#failures`). */
  private loggedBackoff: string | undefined;
  /** The last offer to another incarnation of ours that was logged (`from#leaseTransitions`). */
  private ignoredOffer: string | undefined;
  /**
   * Targets the record asked for (`preferredHolder`, a higher priority, a newer template) that
   * left an offer unanswered, with the monotonic time, ms, until which they are not offered
   * again (every renewal would otherwise start another offer to a candidate that is not there).
   */
  private readonly unansweredUntilMs = new Map<string, number>();

  /**
   * @param offers - the handoff offers, on locks that store them (`storesCandidates`); without,
   *   a handoff is written to its target unoffered (the lock has no place for an acceptance)
   */
  constructor(
    private readonly config: HandoffSessionConfig,
    private readonly host: HandoffSessionHost,
    private readonly offers: HandoffOffers | undefined,
  ) {
    const own = config.advertisement;
    if (config.yieldToNewerTemplate && own?.podTemplateHash !== undefined) {
      this.newerTemplate = new NewerTemplateYield(own, config.newerTemplateSettleMs, config.clock);
    }
  }

  /**
   * The transfer under way, settling (never rejecting) once its write is answered, or
   * `undefined` when none: the run loop awaits it before campaigning again.
   */
  get settled(): Promise<void> | undefined {
    return this.underWay;
  }

  /**
   * Starts handing the term `leading()` returns to `to` — without `to`, to the preferred
   * candidate of the record read first; see `LeaderElector.transferLeadership` for what is
   * written and the errors.
   * @param leading - the live term of a running elector, or `undefined`; asked only once the
   *   arguments are valid
   * @throws InvalidLeaderElectionOptionError (synchronously) for a bad `to` or bound.
   * @throws LeadershipTransferError `not-leader` (synchronously) without a live term or with a
   *   transfer under way.
   */
  transfer(
    to: string | undefined,
    options: TransferLeadershipOptions,
    leading: () => LeaderTermLifetime | undefined,
  ): Promise<void> {
    if (to !== undefined) validateHandoffTarget(to, this.config.identity);
    const leaseDurationSeconds = handoffLeaseDurationSeconds(options, this.config.leaseDurationMs);
    const active = leading();
    if (!active || this.underWay) {
      throw new LeadershipTransferError('not-leader', this.host.lock, to);
    }
    return this.track(
      to === undefined
        ? this.handOffToPreferred(active, leaseDurationSeconds)
        : this.handOff(active, to, leaseDurationSeconds),
    );
  }

  /** Marks `done` as the transfer under way until it settles. */
  private track(done: Promise<void>): Promise<void> {
    this.underWay = done.then(
      () => undefined,
      () => undefined,
    );
    return done.finally(() => (this.underWay = undefined));
  }

  /**
   * Hands the live term over when the record asks for it (logged; never throws): the Lease
   * names another `spec.preferredHolder` (Kubernetes' election controller, or a user with
   * kubectl) — as {@link transfer} does, where client-go's coordinated mode stops renewing and
   * lets it expire; or, with `yieldToHigherPriority`, a candidate of a higher priority than ours
   * advertises itself; or, with `yieldToNewerTemplate`, a candidate of a newer pod template has
   * stayed advertised for the settle time and its template is not backed off
   * (`newer-template-yield.ts`) — to it, as chosen by preference (its term's reason:
   * `preferred`). Each goes through {@link handOff}: offered first, handed over only once the
   * target accepted (a target that leaves the offer unanswered is not offered again for a
   * `leaseDurationSeconds`). Call it with every record of the live term: the settle time is
   * measured across calls.
   * @param record - the record as last read or written
   * @param leading - as for {@link transfer}
   */
  handOverIfAsked(
    record: LeaseRecord | undefined,
    leading: () => LeaderTermLifetime | undefined,
  ): void {
    const { identity, logger, leaseDurationMs } = this.config;
    if (!record) return;
    const newer = this.newerTemplate?.consider(record);
    if (this.underWay) return;
    const preferredHolder = preferredSuccessor(record, identity);
    const ranked = preferredHolder === undefined ? this.higherPriority(record) : undefined;
    const newerTarget =
      preferredHolder === undefined && !ranked && newer && 'yieldTo' in newer
        ? newer.yieldTo
        : undefined;
    if (newer && 'backedOff' in newer) this.logBackoff(newer.backedOff, newer.remainingMs);
    const to = preferredHolder ?? ranked?.identity ?? newerTarget?.identity;
    const active = to === undefined ? undefined : leading();
    if (to === undefined || !active) return;
    const { clock } = this.config;
    if ((this.unansweredUntilMs.get(to) ?? -Infinity) > clock.nowMs()) return;
    this.unansweredUntilMs.delete(to);
    const lock = this.host.lock;
    const failed = (error: unknown) =>
      logger.warn(
        ranked
          ? handoffMessages.yieldFailed(lock, to, error)
          : newerTarget
            ? handoffMessages.newerTemplateYieldFailed(lock, to, error)
            : coordinatedMessages.preferredHandoffFailed(lock, to, error),
      );
    if (ranked) {
      logger.info(handoffMessages.yieldingToPriority(identity, lock, to, ranked.priority));
    } else if (newerTarget) {
      const settleSeconds = this.config.newerTemplateSettleMs / 1000;
      logger.info(
        handoffMessages.yieldingToNewerTemplate(
          identity,
          lock,
          to,
          newerTarget.podTemplateHash!,
          settleSeconds,
        ),
      );
    } else {
      logger.info(coordinatedMessages.preferredHolder(identity, lock, to));
    }
    const leaseDurationSeconds = leaseDurationMs / 1000;
    const preferred = preferredHolder === undefined;
    this.track(this.handOff(active, to, leaseDurationSeconds, preferred)).catch(
      (error: unknown) => {
        if (error instanceof LeadershipTransferError && error.reason === 'not-accepted') {
          this.unansweredUntilMs.set(to, clock.nowMs() + leaseDurationMs);
        }
        failed(error);
      },
    );
  }

  /** Logs a newer template's backoff once per recorded loss. */
  private logBackoff(backoff: TemplateBackoff, remainingMs: number): void {
    const key = `${backoff.podTemplateHash}#${backoff.failures}`;
    if (this.loggedBackoff === key) return;
    this.loggedBackoff = key;
    const { identity, logger } = this.config;
    logger.warn(
      handoffMessages.newerTemplateBackedOff(identity, this.host.lock, backoff, remainingMs),
    );
  }

  /** With `yieldToHigherPriority`: the candidate of a higher priority to yield to, if any. */
  private higherPriority(record: LeaseRecord): AdvertisedCandidate | undefined {
    const { yieldToHigherPriority, identity, advertisement } = this.config;
    if (!yieldToHigherPriority) return undefined;
    return higherPriorityCandidate(record.candidates, identity, advertisement?.priority ?? 0);
  }

  /**
   * True when `record` carries an open handoff offer to this candidate — this incarnation (see
   * `isOpenOfferTo`). An offer to an earlier incarnation of the same identity (a container
   * restarted in its pod) is ignored, logged once per offer.
   */
  offeredToUs(record: LeaseRecord | undefined): boolean {
    if (this.offers === undefined) return false;
    const { identity, advertisement, logger } = this.config;
    if (isOpenOfferTo(record, identity, advertisement?.startedAt)) return true;
    const earlier = offerToOtherIncarnation(record, identity, advertisement?.startedAt);
    const key = earlier && `${record!.handoffOffer!.from}#${record!.leaseTransitions}`;
    if (earlier && key !== this.ignoredOffer) {
      this.ignoredOffer = key;
      logger.info(
        offerMessages.otherIncarnation(identity, this.host.lock, earlier, advertisement?.startedAt),
      );
    }
    return false;
  }

  /**
   * How long, ms, a polling candidate waits before its next read: `retryDelayMs`, or one offer
   * poll while it accepted an offer and awaits the handoff (a handoff only, never steady state).
   */
  nextReadDelayMs(record: LeaseRecord | undefined, retryDelayMs: number): number {
    if (!this.offers || !awaitsHandoff(record, this.config.identity)) return retryDelayMs;
    return Math.min(retryDelayMs, offerPollMs(this.offers.retryPeriodMs));
  }

  /**
   * As candidate: accepts the open offer to us (see `HandoffOffers.accept`); `missed` when the
   * leader had moved on. Never rejects.
   */
  acceptOffer(): Promise<'accepted' | 'missed' | 'failed'> {
    return this.offers?.accept() ?? Promise.resolve('missed');
  }

  /** True when `record` is a live handoff to this candidate (see `isHandoffTo`). */
  handedToUs(record: LeaseRecord): boolean {
    return isHandoffTo(record, this.config.identity);
  }

  /**
   * True when `record`, read by a candidate, was handed to it: it is this candidate's to take
   * at once, whoever else would wait for it (logged).
   */
  accepts(record: LeaseRecord): boolean {
    if (!this.handedToUs(record)) return false;
    const { identity, logger } = this.config;
    logger.info(handoffMessages.accepting(identity, this.host.lock, record.leaseTransitions));
    return true;
  }

  /**
   * Offers the Lease to the preferred candidate of the record read (its advertisements may be
   * newer than our last renewal), then to the next while they do not answer, and hands off to
   * the first that accepts; rejects `no-candidate` when none advertises itself, `not-accepted`
   * when none accepted — the term going on either way.
   */
  private async handOffToPreferred(
    active: LeaderTermLifetime,
    leaseDurationSeconds: number,
  ): Promise<void> {
    const { identity } = this.config;
    const lock = this.host.lock;
    if (!this.offers) throw new LeadershipTransferError('no-candidate', lock, undefined);
    const answer = await this.offers.offerToPreferred(
      (record) => preferredCandidate(record.candidates, identity),
      offeringTerm(active),
    );
    if (answer.outcome === 'lost') throw new LeadershipTransferError('not-leader', lock, undefined);
    if (answer.outcome === 'none') {
      const reason = answer.offered > 0 ? 'not-accepted' : 'no-candidate';
      throw new LeadershipTransferError(reason, lock, undefined, { cause: answer.cause });
    }
    return this.handOff(active, answer.to, leaseDurationSeconds, true, true);
  }

  /**
   * `to`'s advertisement: in the record last seen, else in one read now (an advertisement newer
   * than our last renewal). `undefined` when it does not advertise itself or the read failed.
   */
  private async advertised(to: string): Promise<AdvertisedCandidate | undefined> {
    const seen = advertisementIn(this.host.latest?.(), to);
    if (seen) return seen;
    const { signal, dispose } = timeoutSignal(this.config.clock, this.config.renewDeadlineMs);
    try {
      const current = await this.host.get(signal);
      if (current) this.host.observe(current);
      return advertisementIn(current?.record, to);
    } catch {
      return undefined;
    } finally {
      dispose();
    }
  }

  /**
   * Hands the term to `to`: first, on locks that store offers and when `to` advertises itself
   * (a nest-leader candidate that answers offers), offers it and leads on until `to` accepts
   * (`not-accepted` when it does not: the term goes on, `to`'s advertisement removed); then
   * ends the term, drains it, and writes the handoff. A target that does not advertise itself
   * (a client-go or Python candidate, a nest-leader one without podTemplateHash or priority)
   * cannot be asked: it is handed the Lease unoffered, as before offers existed.
   * @param accepted - `to` already accepted an offer of this term
   * @param leaseDurationSeconds - the handoff's bound; after an accepted offer at most
   *   `acceptedHandoffSeconds` (an offer window)
   */
  private async handOff(
    active: LeaderTermLifetime,
    to: string,
    leaseDurationSeconds: number,
    preferred = false,
    accepted = false,
  ): Promise<void> {
    const { identity, clock, logger, renewDeadlineMs } = this.config;
    const target = this.offers && !accepted ? await this.advertised(to) : undefined;
    if (this.offers && target) {
      const answer = await this.offers.offer(target, offeringTerm(active));
      if (answer.outcome === 'lost')
        throw new LeadershipTransferError('not-leader', this.host.lock, to);
      if (answer.outcome === 'unanswered') {
        throw new LeadershipTransferError('not-accepted', this.host.lock, to, {
          cause: answer.cause,
        });
      }
      accepted = true;
    }
    // An accepted target takes the Lease within a poll: reserve it no longer than an offer
    // window, so one that died since its acceptance costs that, not the whole bound.
    if (accepted && this.offers) {
      leaseDurationSeconds = acceptedHandoffSeconds(
        this.offers.retryPeriodMs,
        leaseDurationSeconds,
      );
    }
    active.end('handed-off');
    await this.host.endTerm();
    // Stop renewing before writing: the handoff is the last write of this term.
    active.lose('handed-off');
    const request = {
      holder: identity,
      leaseTransitions: active.term.leaseTransitions,
      to,
      preferred,
    };
    const { signal, dispose } = timeoutSignal(clock, renewDeadlineMs);
    try {
      await writeHandoff(this.host, { ...request, leaseDurationSeconds }, signal);
    } finally {
      dispose();
    }
    logger.info(handoffMessages.handedOff(identity, this.host.lock, to, leaseDurationSeconds));
  }
}

/** True when `record` carries an advertisement of `identity`. */
function advertisementIn(
  record: LeaseRecord | undefined,
  identity: string,
): AdvertisedCandidate | undefined {
  return record?.candidates?.find((c) => c.identity === identity);
}

/** The term as an offer sees it. */
export function offeringTerm(active: LeaderTermLifetime): OfferingTerm {
  return { leaseTransitions: active.term.leaseTransitions, isLive: () => active.isLive() };
}
