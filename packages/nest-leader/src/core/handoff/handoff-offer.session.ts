/**
 * The requests of handoff offers (the protocol: `handoff-offer.ts`): as leader, offer the
 * Lease to a candidate and wait, leading on, for its acceptance; as candidate, accept an offer
 * made to it. Framework-free.
 */

import { LockConflictError } from '../../errors.js';
import type { AdvertisedCandidate } from '../../locks/advertised-candidates.js';
import type { LeaseRecord, VersionedLeaseRecord } from '../../locks/resource-lock.js';
import { timeoutSignal } from '../clock.js';
import {
  acceptedRecord,
  isAccepted,
  isOpenOfferTo,
  MAX_OFFERS_PER_HANDOFF,
  offerPollMs,
  offerWindowMs,
  type OfferTerms,
  withOffer,
  withoutUnansweredTarget,
} from './handoff-offer.js';
import { offerMessages } from './handoff-offer.messages.js';
import type { ResolvedLeaderElectorOptions } from '../leader-elector.options.js';

/** The elector's settings offers use. @internal */
export type HandoffOfferConfig = Pick<
  ResolvedLeaderElectorOptions,
  'identity' | 'clock' | 'logger' | 'retryPeriodMs' | 'renewDeadlineMs' | 'advertisement'
>;

/**
 * Whom an offer goes to: a candidate's identity and, from the advertisement the leader chose,
 * its start (which incarnation; see `LeaseHandoffOffer.toStartedAt`). @internal
 */
export type OfferTarget = Pick<AdvertisedCandidate, 'identity'> &
  Partial<Pick<AdvertisedCandidate, 'startedAt'>>;

/** What offers need of the elector. @internal */
export interface HandoffOfferHost {
  /** The lock's description, for log lines. */
  lock: string;
  get(signal: AbortSignal): Promise<VersionedLeaseRecord | undefined>;
  update(record: LeaseRecord, version: string, signal: AbortSignal): Promise<string>;
  /** Told of every record read or written. */
  observe(current: VersionedLeaseRecord): void;
}

/** The term an offer is made from: whose, which, and whether it is still live. @internal */
export interface OfferingTerm {
  /** The term's `leaseTransitions`. */
  leaseTransitions: number;
  /** True while the term is live (checked at every step; false ends the offer: `lost`). */
  isLive(): boolean;
}

/**
 * How an offer ended: `accepted` (hand off now), `unanswered` (the target was removed from the
 * advertisements; `cause`: the offer could not even be written), `lost` (the term ended or the
 * record no longer names the leader at its term). @internal
 */
export type OfferOutcome =
  { outcome: 'accepted' } | { outcome: 'unanswered'; cause?: unknown } | { outcome: 'lost' };

/** How offers to the preferred candidates ended: to whom it was accepted, or why none. @internal */
export type PreferredOfferOutcome =
  | { outcome: 'accepted'; to: string }
  | { outcome: 'none'; offered: number; cause?: unknown }
  | { outcome: 'lost' };

/** How many requests an offer's write or an acceptance makes that fail other than by conflict. */
const MAX_FAILED_WRITES = 3;

/** Written, or why not. */
type EditResult = 'written' | 'unchanged' | 'lost';

/** One elector's handoff offers (see the file's description). @internal */
export class HandoffOffers {
  constructor(
    private readonly config: HandoffOfferConfig,
    private readonly host: HandoffOfferHost,
  ) {}

  /** This elector's retryPeriod, ms. */
  get retryPeriodMs(): number {
    return this.config.retryPeriodMs;
  }

  /** The offer window at this elector's timings, ms (see `offerWindowMs`). */
  get windowMs(): number {
    return offerWindowMs(this.config.retryPeriodMs);
  }

  /**
   * Offers the Lease to `target` — the incarnation its advertisement's start names — and waits,
   * leading on, for its acceptance: writes the offer, reads
   * every `offerPollMs` until it is accepted or the window passes, then (unanswered) removes the
   * offer and `to`'s advertisement in one write — accepted after all if that write's read
   * finds it accepted. Never rejects.
   */
  async offer(target: OfferTarget, term: OfferingTerm): Promise<OfferOutcome> {
    const { identity, clock, logger, retryPeriodMs } = this.config;
    const lock = this.host.lock;
    const to = target.identity;
    const offer: OfferTerms = { to, from: identity, leaseTransitions: term.leaseTransitions };
    if (target.startedAt) offer.toStartedAt = target.startedAt;
    const windowMs = this.windowMs;
    const startedMs = clock.nowMs();
    const { signal, dispose } = timeoutSignal(clock, windowMs);
    try {
      const written = await this.edit(signal, term, (record) =>
        isAccepted(record, offer) ? undefined : withOffer(record, offer),
      );
      if (written.result === 'lost') return { outcome: 'lost' };
      if (written.result === 'unchanged') return { outcome: 'accepted' };
      if (written.result === 'failed') {
        logger.warn(offerMessages.offerFailed(identity, lock, to, written.error));
        return { outcome: 'unanswered', cause: written.error };
      }
      logger.info(offerMessages.offered(identity, lock, to, windowMs));
      while (!signal.aborted) {
        await clock.sleep(offerPollMs(retryPeriodMs), signal).catch(() => undefined);
        if (!term.isLive()) return { outcome: 'lost' };
        if (signal.aborted) break;
        const current = await this.host.get(signal).catch(() => undefined);
        if (!current) continue;
        this.host.observe(current);
        if (!this.ours(current.record, term)) return { outcome: 'lost' };
        if (isAccepted(current.record, offer)) {
          logger.info(offerMessages.accepted(identity, lock, to, clock.nowMs() - startedMs));
          return { outcome: 'accepted' };
        }
      }
    } finally {
      dispose();
    }
    return this.close(offer, term, startedMs);
  }

  /**
   * Offers the Lease to the candidate `pick` chooses from the record read, and on no answer to
   * the next it chooses (the unanswered one's advertisement removed), at most
   * `MAX_OFFERS_PER_HANDOFF` times. `none` when `pick` finds nobody or nobody accepted.
   */
  async offerToPreferred(
    pick: (record: LeaseRecord) => AdvertisedCandidate | undefined,
    term: OfferingTerm,
    record?: LeaseRecord,
  ): Promise<PreferredOfferOutcome> {
    let cause: unknown;
    for (let offered = 0; ; offered++) {
      let current = record;
      record = undefined;
      if (current === undefined) {
        const { signal, dispose } = timeoutSignal(this.config.clock, this.config.renewDeadlineMs);
        try {
          const read = await this.host.get(signal);
          if (read) this.host.observe(read);
          current = read?.record;
        } catch (error) {
          return { outcome: 'none', offered, cause: error };
        } finally {
          dispose();
        }
      }
      if (!current || !this.ours(current, term) || !term.isLive()) return { outcome: 'lost' };
      const target = pick(current);
      if (target === undefined || offered >= MAX_OFFERS_PER_HANDOFF) {
        return { outcome: 'none', offered, cause };
      }
      const answer = await this.offer(target, term);
      if (answer.outcome === 'accepted') return { outcome: 'accepted', to: target.identity };
      if (answer.outcome === 'lost') return answer;
      cause = answer.cause;
    }
  }

  /**
   * As candidate: accepts the open offer to this candidate — this incarnation: its
   * advertisement's start — on the record, re-reading after
   * conflicts. Resolves `accepted`, `missed` (no open offer to us any more when read: the
   * leader moved on) or `failed` (logged). Never rejects; bounded by the offer window.
   */
  async accept(): Promise<'accepted' | 'missed' | 'failed'> {
    const { identity, clock, logger, advertisement } = this.config;
    const lock = this.host.lock;
    const { signal, dispose } = timeoutSignal(clock, this.windowMs);
    try {
      let from = '';
      let leaseTransitions = 0;
      const written = await this.edit(signal, undefined, (record) => {
        if (!isOpenOfferTo(record, identity, advertisement?.startedAt)) return undefined;
        ({ from, leaseTransitions } = record.handoffOffer!);
        return acceptedRecord(record);
      });
      if (written.result === 'failed') {
        logger.warn(offerMessages.acceptFailed(identity, lock, written.error));
        return 'failed';
      }
      if (written.result !== 'written') return 'missed';
      logger.info(offerMessages.accepting(identity, lock, from, leaseTransitions));
      return 'accepted';
    } finally {
      dispose();
    }
  }

  /** True when this candidate may offer `record`: it names it at the term's transitions. */
  private ours(record: LeaseRecord, term: OfferingTerm): boolean {
    return (
      record.holderIdentity === this.config.identity &&
      record.leaseTransitions === term.leaseTransitions
    );
  }

  /** The window passed: remove the offer and `to`'s advertisement, unless accepted meanwhile. */
  private async close(
    offer: OfferTerms,
    term: OfferingTerm,
    startedMs: number,
  ): Promise<OfferOutcome> {
    const { identity, clock, logger, renewDeadlineMs } = this.config;
    const lock = this.host.lock;
    let acceptedLate = false;
    const { signal, dispose } = timeoutSignal(clock, renewDeadlineMs);
    try {
      const closed = await this.edit(signal, term, (record) => {
        acceptedLate = isAccepted(record, offer);
        return acceptedLate ? undefined : withoutUnansweredTarget(record, offer.to);
      });
      if (closed.result === 'lost') return { outcome: 'lost' };
      if (acceptedLate) {
        logger.info(offerMessages.accepted(identity, lock, offer.to, clock.nowMs() - startedMs));
        return { outcome: 'accepted' };
      }
    } finally {
      dispose();
    }
    logger.warn(offerMessages.unanswered(identity, lock, offer.to, this.windowMs));
    return { outcome: 'unanswered' };
  }

  /**
   * Reads the record and writes `change(record)` over the version read (`undefined`: nothing to
   * write), re-reading after each conflict; with `term`, only while the record names this
   * candidate at its transitions (else `lost`). Other failures: at most `MAX_FAILED_WRITES`.
   */
  private async edit(
    signal: AbortSignal,
    term: OfferingTerm | undefined,
    change: (record: LeaseRecord) => LeaseRecord | undefined,
  ): Promise<{ result: EditResult } | { result: 'failed'; error: unknown }> {
    let failures = 0;
    for (;;) {
      try {
        const current = await this.host.get(signal);
        if (current) this.host.observe(current);
        if (term && (!current || !this.ours(current.record, term) || !term.isLive())) {
          return { result: 'lost' };
        }
        if (!current) return { result: 'unchanged' };
        const record = change(current.record);
        if (record === undefined) return { result: 'unchanged' };
        const version = await this.host.update(record, current.version, signal);
        this.host.observe({ record, version });
        return { result: 'written' };
      } catch (error) {
        if (signal.aborted) return { result: 'failed', error };
        if (error instanceof LockConflictError) continue;
        if (++failures >= MAX_FAILED_WRITES) return { result: 'failed', error };
      }
    }
  }
}
