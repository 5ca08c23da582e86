/**
 * How a candidate that does not lead judges the holder of the Lease it read: whether a Lease
 * naming this candidate's identity is its own or a namesake's (another process with the same
 * identity), and whether the lock proves the holder's process gone (`FileLock`, see
 * `HolderLiveness`). The elector asks before taking a Lease. Framework-free.
 */

import type { LeaseRecord, VersionedLeaseRecord } from '../../locks/resource-lock.js';
import { namedByController, preferredSuccessor } from '../handoff/coordinated-election.js';
import { electionMessages } from '../election.messages.js';
import { followerMessages } from './follower.messages.js';
import type { ResolvedLeaderElectorOptions } from '../leader-elector.options.js';
import type { ObservedRecord } from './observed-record.js';

/** The elector's settings the holder checks use (the clock: to say until when). @internal */
export type HolderChecksConfig = Pick<
  ResolvedLeaderElectorOptions,
  'identity' | 'lock' | 'clock' | 'logger' | 'coordinated'
>;

/** What the elector knows of a record besides the record itself. @internal */
export interface HolderCheckContext {
  /** The record is a handoff to this candidate (`isHandoffTo`): never waited for. */
  handedToUs: boolean;
  /** leaseTransitions of this candidate's last write naming itself, if any. */
  ownTransitions: number | undefined;
  /** The election record changed since the previous read. */
  renewedSinceLastRead: boolean;
}

/**
 * The holder checks of one candidate, with what it remembers between reads: whether it
 * suspects a namesake, and whom it last said it waits for.
 * @internal
 */
export class HolderChecks {
  /** Set when another process renewed our Lease under our identity; cleared on acquiring. */
  private sharedIdentitySuspected = false;
  /** `<holder> <transitions>` of the last holder we said we wait for (unprovable liveness). */
  private waitReported: string | undefined;

  /**
   * @param observed - the elector's last sighting of the record, read after it observed
   *   the record it asks about
   */
  constructor(
    private readonly config: HolderChecksConfig,
    private readonly observed: ObservedRecord,
  ) {}

  /**
   * True when a candidate that does not lead must wait for the holder of `current` (already
   * observed): it names someone else, its lease has not expired by our observation, and the
   * lock does not prove its process gone. A Lease naming this identity that this process did
   * not write (other transitions than its own, or a namesake suspected) is someone else's:
   * taking it back at once, as client-go does, lets two live namesakes lead together. When such
   * a Lease keeps changing, warns once that a namesake holds it.
   */
  mustWaitFor(current: VersionedLeaseRecord, context: HolderCheckContext): boolean {
    const { record } = current;
    if (this.config.coordinated) return !this.namedByCoordination(record, context);
    const ours = context.handedToUs || this.writtenByUs(record, context.ownTransitions);
    const heldByOther = record.holderIdentity !== '' && !ours;
    if (!heldByOther || this.observed.expired() || this.provenGone(current)) return false;
    if (record.holderIdentity === this.config.identity && context.renewedSinceLastRead) {
      this.suspectNamesake();
    }
    return true;
  }

  /**
   * The leader found its Lease renewed under its identity at other transitions: warns, and
   * from now on treats a Lease naming this identity as someone else's until it expires,
   * rather than fight over it.
   */
  sharedIdentityDetected(): void {
    const { logger, lock, identity } = this.config;
    logger.warn(electionMessages.duplicateIdentity(lock.description, identity));
    this.sharedIdentitySuspected = true;
  }

  /** A term began: the Lease this candidate took was its own; no namesake suspected. */
  termBegan(): void {
    this.sharedIdentitySuspected = false;
  }

  /**
   * Coordinated mode (see `LeaderElectorOptions.coordinated`): a Lease is this candidate's to
   * take up only when it names it — as the election controller names a holder (no
   * `acquireTime`; not while a namesake is suspected), as a handoff to it, or as its own last
   * write — has not expired by our observation, and does not prefer someone else. A free or
   * expired Lease is the controller's to assign: always waited for.
   */
  private namedByCoordination(record: LeaseRecord, context: HolderCheckContext): boolean {
    const { identity } = this.config;
    const named =
      context.handedToUs ||
      this.writtenByUs(record, context.ownTransitions) ||
      (!this.sharedIdentitySuspected && namedByController(record, identity));
    return named && !this.observed.expired() && !preferredSuccessor(record, identity);
  }

  private writtenByUs(record: LeaseRecord, ownTransitions: number | undefined): boolean {
    return (
      record.holderIdentity === this.config.identity &&
      !this.sharedIdentitySuspected &&
      record.leaseTransitions === ownTransitions
    );
  }

  /**
   * True when the lock proves the holder's process gone: the record may be taken at once,
   * since no process can renew it any more. When the lock can check holders but not this one
   * (`unknown`), says once per holder and term whom it waits for and until when (by this
   * candidate's observation).
   */
  private provenGone(current: VersionedLeaseRecord): boolean {
    const { logger, clock } = this.config;
    const lock = this.config.lock.description;
    const liveness = current.holderLiveness;
    const { holderIdentity, leaseTransitions } = current.record;
    if (liveness?.state === 'gone') {
      logger.info(followerMessages.holderGone(lock, holderIdentity, liveness.proof));
      return true;
    }
    const key = `${holderIdentity} ${leaseTransitions}`;
    if (liveness?.state === 'unknown' && this.waitReported !== key) {
      this.waitReported = key;
      const until = new Date(clock.wallNow().getTime() + this.observed.msUntilExpiry());
      logger.info(followerMessages.waitingForHolder(lock, holderIdentity, until, liveness.reason));
    }
    return false;
  }

  /** Another live process writes the Lease under our identity: warn once, and keep off it. */
  private suspectNamesake(): void {
    if (this.sharedIdentitySuspected) return;
    this.sharedIdentitySuspected = true;
    const { logger, lock, identity } = this.config;
    logger.warn(electionMessages.namesakeHolds(lock.description, identity));
  }
}
