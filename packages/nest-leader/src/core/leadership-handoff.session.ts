/**
 * One elector's side of targeted handoffs: as leader, the transfer (end the term and drain it,
 * stop renewing, write the handoff); as candidate, the recognition of a Lease handed to it.
 * The handoff record and its marker are in `leadership-handoff.ts`. Framework-free.
 */

import { LeadershipTransferError } from '../errors.js';
import type { AdvertisedCandidate } from '../locks/advertised-candidates.js';
import type { LeaseRecord, TemplateBackoff, VersionedLeaseRecord } from '../locks/resource-lock.js';
import { higherPriorityCandidate, preferredCandidate } from './candidate-preference.js';
import { timeoutSignal } from './clock.js';
import { preferredSuccessor } from './coordinated-election.js';
import { coordinatedMessages } from './coordinated-election.messages.js';
import type { ResolvedLeaderElectorOptions } from './leader-elector.options.js';
import type { LeaderTermLifetime } from './leader-term.js';
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

  constructor(
    private readonly config: HandoffSessionConfig,
    private readonly host: HandoffSessionHost,
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
   * `preferred`). Call it with every record of the live term: the settle time is measured
   * across calls.
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
    this.track(this.handOff(active, to, leaseDurationSeconds, preferred)).catch(failed);
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
   * Reads the record (its advertisements may be newer than our last renewal), then hands off
   * to the preferred candidate; rejects `no-candidate`, the term going on, when there is none.
   */
  private async handOffToPreferred(
    active: LeaderTermLifetime,
    leaseDurationSeconds: number,
  ): Promise<void> {
    const { identity, clock, renewDeadlineMs } = this.config;
    const { signal, dispose } = timeoutSignal(clock, renewDeadlineMs);
    let current: VersionedLeaseRecord | undefined;
    try {
      current = await this.host.get(signal);
    } catch (cause) {
      throw new LeadershipTransferError('no-candidate', this.host.lock, undefined, { cause });
    } finally {
      dispose();
    }
    if (current) this.host.observe(current);
    const to = preferredCandidate(current?.record.candidates, identity)?.identity;
    if (to === undefined) throw new LeadershipTransferError('no-candidate', this.host.lock, to);
    if (!active.isLive()) throw new LeadershipTransferError('not-leader', this.host.lock, to);
    return this.handOff(active, to, leaseDurationSeconds, true);
  }

  private async handOff(
    active: LeaderTermLifetime,
    to: string,
    leaseDurationSeconds: number,
    preferred = false,
  ): Promise<void> {
    const { identity, clock, logger, renewDeadlineMs } = this.config;
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
