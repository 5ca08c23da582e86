/**
 * One shard's term on its owner: from the grant this member saw until the shard is revoked,
 * the member's epoch ends, or the election stops. Framework-free.
 */

import { ShardTermEndedError } from '../errors.js';
import type { ShardTermEndReason } from '../errors.interfaces.js';
import { checkTermOnRead, nativeAborted, type LeaderTerm } from '../core/leader-term.js';

/**
 * A shard owned by this member, as work started for it holds it: bound to one grant.
 * Like a `LeaderTerm`, the checks are made at call time — `isLive()`, `throwIfEnded()` and
 * `signal.aborted` also end the term when the member's renew deadline has passed, even if no
 * timer could run (a paused process).
 */
export interface ShardTerm {
  /** The shard, `0 ≤ shard < shards`. */
  readonly shard: number;
  /**
   * The fencing token: the assignment revision at which the shard was granted. Strictly
   * increases per shard, whoever owns it; pass it to the systems the work writes to and have
   * them refuse a token lower than one they have seen for the shard.
   */
  readonly token: number;
  /** The member epoch (its member Lease's `leaseTransitions`) the grant belongs to. */
  readonly memberEpoch: number;
  /** Aborted, with a `ShardTermEndedError`, the moment the term ends. */
  readonly signal: AbortSignal;
  /** True while the term is live (re-checks the member's renew deadline now). */
  isLive(): boolean;
  /** @throws ShardTermEndedError once the term has ended */
  throwIfEnded(): void;
}

/** The owner's side of a {@link ShardTerm}: its end and drain. @internal */
export class ShardTermLifetime {
  readonly term: ShardTerm;
  /** Set once the term ends: the drain (`onShardStopped`), shared by every caller. */
  ending: Promise<void> | undefined;
  private readonly controller = new AbortController();

  /**
   * @param member - the member epoch's term; the shard term is live only while it is
   */
  constructor(shard: number, token: number, member: LeaderTerm) {
    const signal = this.controller.signal;
    const isLive = (): boolean => {
      if (nativeAborted.call(signal)) return false;
      if (member.isLive()) return true;
      this.end('member-epoch-ended');
      return false;
    };
    checkTermOnRead(signal, isLive);
    this.term = Object.freeze({
      shard,
      token,
      memberEpoch: member.leaseTransitions,
      signal,
      isLive,
      throwIfEnded: (): void => {
        if (!isLive()) throw signal.reason;
      },
    });
  }

  /** Why the term ended, or `undefined` while it has not (no deadline check). */
  get endReason(): ShardTermEndReason | undefined {
    if (!nativeAborted.call(this.controller.signal)) return undefined;
    return (this.controller.signal.reason as ShardTermEndedError).reason;
  }

  /** Ends the term (aborts its signal); later calls do nothing. @returns true if it ended now */
  end(reason: ShardTermEndReason): boolean {
    if (nativeAborted.call(this.controller.signal)) return false;
    this.controller.abort(new ShardTermEndedError(reason, this.term.shard, this.term.token));
    return true;
  }
}
