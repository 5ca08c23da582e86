/**
 * A stopping leader's handover: while it still leads, it waits for a newer pod template's
 * candidate and offers the Lease to the preferred candidate (`candidate-preference.ts`) until
 * one accepts (`handoff-offer.ts`: a candidate that is gone never gets the Lease); then, after
 * its term drained, the last write: the handoff to the candidate that accepted, else a release
 * to anyone — as client-go's `release`, re-reading first. Framework-free.
 */

import { LockConflictError } from '../../errors.js';
import type { LeaseRecord } from '../../locks/resource-lock.js';
import type { CandidateAdvertisement } from './candidate-advertisement.js';
import { advertisementMessages } from './candidate-advertisement.messages.js';
import { preferredCandidate, withoutCandidate } from './candidate-preference.js';
import { timeoutSignal } from '../clock.js';
import { electionMessages } from '../election.messages.js';
import { acceptedHandoffSeconds, MAX_OFFERS_PER_HANDOFF, withoutOffer } from './handoff-offer.js';
import type { HandoffOffers, OfferingTerm } from './handoff-offer.session.js';
import type { ResolvedLeaderElectorOptions } from '../leader-elector.options.js';
import { handoffRecord, type HandoffWriter } from './leadership-handoff.js';
import { handoffMessages } from './leadership-handoff.messages.js';

/** How often a stopping leader reads the record for a newer pod template's candidate, ms. */
export const NEWER_TEMPLATE_POLL_MS = 500;

/**
 * How long a stopping leader that sees only candidates of its own pod template waits before
 * taking the stop for a plain one (its peers stay) rather than a rollout's (its peers stop
 * too and withdraw), ms: half of renewDeadline (5 s at the defaults). It leads on meanwhile,
 * so the wait costs no time without a leader, only shutdown time in a plain stop; a shorter
 * one (it was 1 s) took peers whose withdrawal was merely slow — a loaded node, a Lease
 * contended by a whole rollout — for staying ones, and handed to a pod that was itself
 * stopping (a second transition, after the handoff's bound).
 */
export function sameTemplateSettleMs(renewDeadlineMs: number): number {
  return renewDeadlineMs / 2;
}

/** How many times the stop write re-reads after a conflict before giving up. */
export const MAX_STOP_WRITE_ATTEMPTS = 3;

/** A stop's wait for a newer template, across the offers it makes (see `awaitNewerTemplate`). */
export interface NewerTemplateWait {
  /** When the wait began (monotonic ms): the budget `newerTemplateWaitSeconds` counts from it. */
  startedMs: number;
  /** The other candidates advertised when the wait began (set by its first read). */
  peersAtStop?: Set<string>;
  /** The wait for a newer template was logged. */
  announced: boolean;
}

/** What a stopping leader writes over. */
export interface StopHandoverRequest {
  /** The stopping candidate's identity. */
  holder: string;
  /** leaseTransitions of its last write naming itself: only that record is its to hand over. */
  leaseTransitions: number;
  /**
   * The candidate to hand off to — one that accepted this term's handoff offer
   * ({@link StopHandover.handOverWhileLeading}); `undefined`: release.
   */
  to: string | undefined;
  /** The handoff's bound, whole seconds (see `TransferLeadershipOptions.leaseDurationSeconds`). */
  leaseDurationSeconds: number;
  /** Remove the holder's own advertisement in the same write. */
  withdraw: boolean;
}

/** What the stop write did. */
export type StopHandoverOutcome =
  /** Handed to `to` (a handoff record, as `transferLeadership`). */
  | { outcome: 'handed-off'; to: string; leaseDurationSeconds: number }
  /**
   * Released: holder cleared, `leaseDurationSeconds: 1`, leaseTransitions kept; `handoffFailed`:
   * after a handoff write to the preferred candidate failed.
   */
  | { outcome: 'released'; handoffFailed: boolean }
  /** The record no longer names the holder at its transitions (`holder`: whom it names). */
  | { outcome: 'not-ours'; holder: string }
  /** The record does not exist. */
  | { outcome: 'missing' };

/**
 * Reads the record and, if it still names `request.holder` at `request.leaseTransitions`,
 * writes the handoff to `request.to` (when set) or the released record, without any handoff
 * offer, over the version read; re-reads after a conflict, at most
 * {@link MAX_STOP_WRITE_ATTEMPTS} times. A handoff write that fails otherwise is followed by a
 * release attempt (`onHandoffFailed` is told why) within the same `signal`.
 * @throws the lock's error when the release itself fails (or conflicts persist).
 */
export async function releaseOrHandOff(
  writer: HandoffWriter,
  request: StopHandoverRequest,
  signal: AbortSignal,
  onHandoffFailed: (to: string, error: unknown) => void,
): Promise<StopHandoverOutcome> {
  const { holder, leaseTransitions, leaseDurationSeconds } = request;
  let handOffTo = request.to;
  for (let attempt = 1; ; attempt++) {
    const current = await writer.get(signal);
    if (!current) return { outcome: 'missing' };
    writer.observe(current);
    const { record } = current;
    if (record.holderIdentity !== holder || record.leaseTransitions !== leaseTransitions) {
      return { outcome: 'not-ours', holder: record.holderIdentity };
    }
    const kept: LeaseRecord = withoutOffer(record);
    if (request.withdraw) {
      const candidates = withoutCandidate(record.candidates, holder);
      if (candidates) kept.candidates = candidates;
      else delete kept.candidates;
    }
    const to = handOffTo;
    const now = writer.now();
    const next = writer.finish(
      to === undefined
        ? { ...kept, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now }
        : handoffRecord(
            kept,
            to,
            leaseDurationSeconds,
            writer.nextTransitions(leaseTransitions),
            now,
            true,
          ),
    );
    try {
      const version = await writer.update(next, current.version, signal);
      writer.observe({ record: next, version });
      return to === undefined
        ? { outcome: 'released', handoffFailed: request.to !== undefined }
        : { outcome: 'handed-off', to, leaseDurationSeconds };
    } catch (error) {
      if (signal.aborted) throw error;
      if (to !== undefined && !(error instanceof LockConflictError)) {
        onHandoffFailed(to, error);
        handOffTo = undefined;
      } else if (!(error instanceof LockConflictError) || attempt >= MAX_STOP_WRITE_ATTEMPTS) {
        throw error;
      }
    }
  }
}

/** The elector's settings a {@link StopHandover} uses. @internal */
export type StopHandoverConfig = Pick<
  ResolvedLeaderElectorOptions,
  | 'identity'
  | 'clock'
  | 'logger'
  | 'leaseDurationMs'
  | 'renewDeadlineMs'
  | 'retryPeriodMs'
  | 'releaseOnStop'
  | 'handoffOnStop'
  | 'newerTemplateWaitMs'
>;

/**
 * A stopping elector's wait for a newer pod template ({@link StopHandover.awaitNewerTemplate},
 * while it still leads) and its writes, after its term drained and its loop ended (see
 * `LeaderElector.stop`): the handoff or release ({@link releaseOrHandOff}), then, if that
 * write did not carry it, the removal of its advertisement. Each bounded by renewDeadline;
 * failures are logged, never thrown.
 * @internal
 */
export class StopHandover {
  /**
   * @param offers - the handoff offers, on locks that store advertisements; without, the stop
   *   releases
   */
  constructor(
    private readonly config: StopHandoverConfig,
    private readonly host: HandoffWriter,
    private readonly advertisement: CandidateAdvertisement | undefined,
    private readonly offers: HandoffOffers | undefined,
  ) {}

  /**
   * While this candidate still leads (`term`), chooses whom to hand off to on stop: waits for a
   * newer pod template ({@link StopHandover.awaitNewerTemplate}), then offers the Lease to the
   * preferred candidate, leading on until it accepts; a candidate that does not accept within
   * the offer window is removed from the advertisements and the wait and offer repeat (the
   * wait's budget is shared), at most `MAX_OFFERS_PER_HANDOFF` offers. Resolves the candidate
   * that accepted, or `undefined` (release): nobody advertises itself or accepted, the term
   * ended, or handing off on stop is off. Never rejects.
   * @param latest - the record as this elector last read or wrote it
   */
  async handOverWhileLeading(
    term: OfferingTerm,
    latest: () => LeaseRecord | undefined,
  ): Promise<string | undefined> {
    const { identity, releaseOnStop, handoffOnStop, clock } = this.config;
    if (!releaseOnStop || !handoffOnStop || !this.offers) return undefined;
    const wait: NewerTemplateWait = { startedMs: clock.nowMs(), announced: false };
    for (let offered = 0; offered < MAX_OFFERS_PER_HANDOFF; offered++) {
      // The record last read or written: the leader's renewals carry the advertisements (a new
      // one makes the next renewal conflict and read), so no read of its own is needed here.
      const record = (await this.awaitNewerTemplate(() => term.isLive(), wait)) ?? latest();
      if (!term.isLive()) return undefined;
      const target = preferredCandidate(record?.candidates, identity);
      if (target === undefined) return undefined;
      const answer = await this.offers.offer(target, term);
      if (answer.outcome === 'accepted') return target.identity;
      if (answer.outcome === 'lost') return undefined;
    }
    return undefined;
  }

  /**
   * Waits, while this candidate still leads, for a rollout's new pods: a Deployment's rollout
   * (the demo's `maxUnavailable: 100%`) stops every old pod at once while the new ones are
   * still starting, so handing off at once would pick an old pod that is itself stopping (two
   * transitions instead of one). Reads the record every {@link NEWER_TEMPLATE_POLL_MS}, for at
   * most `newerTemplateWaitSeconds` (default renewDeadline) since `wait.startedMs`, and returns
   * as soon as a candidate of another, newer pod template is preferred; or once a candidate of
   * its own template that was advertised when the stop began still advertises itself
   * {@link sameTemplateSettleMs} (half of renewDeadline) later (a plain stop — a deleted pod, an
   * eviction — whose peers stay: hand to one of them); while no other candidate advertises
   * itself at all (the old peers withdrew), it goes on waiting for the new pods. Returns at
   * once without a `podTemplateHash` of its own or without `releaseOnStop`/`handoffOnStop`,
   * and when `leading()` turns false. Read errors end the wait. Resolves the record last read
   * (`undefined`: none).
   * @param wait - the stop's wait so far: called again after an unanswered offer, it goes on
   *   with the same start and the same peers
   */
  async awaitNewerTemplate(
    leading: () => boolean,
    wait: NewerTemplateWait = { startedMs: this.config.clock.nowMs(), announced: false },
  ): Promise<LeaseRecord | undefined> {
    const { identity, clock, logger, releaseOnStop, handoffOnStop } = this.config;
    const { renewDeadlineMs, newerTemplateWaitMs: waitMs } = this.config;
    const own = this.advertisement?.entry.podTemplateHash;
    if (!releaseOnStop || !handoffOnStop || own === undefined) return undefined;
    const lock = this.host.lock;
    const { startedMs } = wait;
    const settleMs = sameTemplateSettleMs(renewDeadlineMs);
    const remainingMs = startedMs + waitMs - clock.nowMs();
    if (remainingMs <= 0) return undefined;
    const { signal, dispose } = timeoutSignal(clock, remainingMs);
    let record: LeaseRecord | undefined;
    try {
      while (leading() && !signal.aborted) {
        const current = await this.host.get(signal);
        if (current) this.host.observe(current);
        record = current?.record;
        const candidates = record?.candidates;
        // Peers advertised when the stop began: only one of them still there after the settle
        // makes it a plain stop. A peer of our template that advertises itself later is a pod
        // still starting — in a rollout, one the rollout is replacing as well.
        wait.peersAtStop ??= new Set(
          (candidates ?? []).map((c) => c.identity).filter((id) => id !== identity),
        );
        const best = preferredCandidate(candidates, identity);
        if (best?.podTemplateHash !== undefined && best.podTemplateHash !== own) {
          if (wait.announced) {
            logger.info(advertisementMessages.newerTemplateSeen(identity, lock, best.identity));
          }
          return record;
        }
        const peerStays = candidates?.some((c) => wait.peersAtStop!.has(c.identity)) ?? false;
        if (peerStays && clock.nowMs() - startedMs >= settleMs) return record;
        if (best === undefined && !wait.announced) {
          logger.info(advertisementMessages.awaitingNewerTemplate(identity, lock, own, waitMs));
          wait.announced = true;
        }
        await clock.sleep(NEWER_TEMPLATE_POLL_MS, signal);
      }
      if (wait.announced)
        logger.info(advertisementMessages.noNewerTemplate(identity, lock, waitMs));
    } catch {
      // A failed read ends the wait: the stop write that follows reads again and reports.
    } finally {
      dispose();
    }
    return record;
  }

  /**
   * @param ownTransitions - leaseTransitions of our last write naming us; none: never led.
   * @param to - the candidate that accepted this term's handoff offer, if any: handed the Lease
   */
  async finish(ownTransitions: number | undefined, to?: string): Promise<void> {
    const withdrawn =
      this.config.releaseOnStop &&
      ownTransitions !== undefined &&
      (await this.release(ownTransitions, to));
    if (!this.advertisement || withdrawn) return;
    const { signal, dispose } = timeoutSignal(this.config.clock, this.config.renewDeadlineMs);
    try {
      await this.advertisement.withdraw(signal);
    } finally {
      dispose();
    }
  }

  /** Hands off or releases; true when our advertisement went with that write. */
  private async release(ownTransitions: number, to: string | undefined): Promise<boolean> {
    const { identity, clock, logger, renewDeadlineMs, handoffOnStop } = this.config;
    const lock = this.host.lock;
    const { signal, dispose } = timeoutSignal(clock, renewDeadlineMs);
    try {
      const done = await releaseOrHandOff(
        this.host,
        {
          holder: identity,
          leaseTransitions: ownTransitions,
          to: handoffOnStop ? to : undefined,
          // `to` accepted this term's offer: it takes the Lease within a poll.
          leaseDurationSeconds: acceptedHandoffSeconds(
            this.config.retryPeriodMs,
            Math.ceil(this.config.leaseDurationMs / 1000),
          ),
          withdraw: this.advertisement !== undefined,
        },
        signal,
        (to, error) =>
          logger.warn(advertisementMessages.handoffOnStopFailed(identity, lock, to, error)),
      );
      switch (done.outcome) {
        case 'handed-off':
          logger.info(
            handoffMessages.handedOff(identity, lock, done.to, done.leaseDurationSeconds),
          );
          return true;
        case 'released':
          if (this.advertisement && handoffOnStop && !done.handoffFailed) {
            logger.info(advertisementMessages.noPreferredCandidate(identity, lock));
          }
          // Routine: the "stopped leading" line already told the change; failures are warnings.
          logger.debug(electionMessages.released(identity, lock));
          return true;
        case 'not-ours':
          logger.debug(electionMessages.releaseSkipped(lock, done.holder));
          return false;
        case 'missing':
          return false;
      }
    } catch (error) {
      logger.warn(electionMessages.releaseFailed(lock, error));
      return false;
    } finally {
      dispose();
    }
  }
}
