/**
 * One elector's side of targeted handoffs: as leader, the transfer (end the term and drain it,
 * stop renewing, write the handoff); as candidate, the recognition of a Lease handed to it.
 * The handoff record and its marker are in `leadership-handoff.ts`. Framework-free.
 */

import { LeadershipTransferError } from '../errors.js';
import type { LeaseRecord, VersionedLeaseRecord } from '../locks/resource-lock.js';
import { preferredCandidate } from './candidate-preference.js';
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

/** The elector's settings a handoff session uses. @internal */
export type HandoffSessionConfig = Pick<
  ResolvedLeaderElectorOptions,
  'identity' | 'clock' | 'logger' | 'leaseDurationMs' | 'renewDeadlineMs'
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

  constructor(
    private readonly config: HandoffSessionConfig,
    private readonly host: HandoffSessionHost,
  ) {}

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
    const done =
      to === undefined
        ? this.handOffToPreferred(active, leaseDurationSeconds)
        : this.handOff(active, to, leaseDurationSeconds);
    this.underWay = done.then(
      () => undefined,
      () => undefined,
    );
    return done.finally(() => (this.underWay = undefined));
  }

  /**
   * The Lease names another `spec.preferredHolder` while we lead (Kubernetes' election
   * controller, or a user with kubectl): hand it over as {@link transfer} does, where client-go's
   * coordinated mode stops renewing and lets it expire. Logged; never throws.
   * @param record - the record as last read or written
   * @param leading - as for {@link transfer}
   */
  honourPreferredHolder(
    record: LeaseRecord | undefined,
    leading: () => LeaderTermLifetime | undefined,
  ): void {
    const { identity, logger } = this.config;
    const to = preferredSuccessor(record, identity);
    if (!to || this.underWay || !leading()) return;
    logger.info(coordinatedMessages.preferredHolder(identity, this.host.lock, to));
    this.transfer(to, {}, leading).catch((error: unknown) =>
      logger.warn(coordinatedMessages.preferredHandoffFailed(this.host.lock, to, error)),
    );
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
