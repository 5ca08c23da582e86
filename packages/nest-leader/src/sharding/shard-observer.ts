/**
 * What a sharded election reports as it runs (metrics, tests): the seam between the
 * framework-free election and its observers (`PrometheusShardObserver`). Framework-free.
 */

import type { ShardTermEndReason } from '../errors.interfaces.js';

/** Receives what happens to one member of a sharded election; every method is optional. */
export interface ShardObserver {
  /** This member started a shard term. */
  shardStarted?(event: { election: string; shard: number; token: number; owned: number }): void;
  /**
   * A shard term of this member ended (`owned`: shards still owned after it); `drainMs` comes
   * with {@link ShardObserver.shardDrained} once its work has drained.
   */
  shardStopped?(event: {
    election: string;
    shard: number;
    token: number;
    reason: ShardTermEndReason;
    owned: number;
  }): void;
  /** A shard's work drained after its term ended, `drainMs` after (monotonic ms). */
  shardDrained?(event: { election: string; shard: number; drainMs: number }): void;
  /**
   * The coordinator (this member) granted a shard that it had revoked from another member,
   * `handoffMs` after it wrote the revoke (monotonic ms, this coordinator's observation).
   */
  shardHandedOff?(event: { election: string; shard: number; handoffMs: number }): void;
  /**
   * The coordinator granted a shard (to `owner`, with fencing token `token`; `from`: the owner
   * the assignment named before, if any) that nobody could work on since `unownedMs` ago: from
   * the moment it observed the previous owner stop (acknowledgement, release, epoch over) to the
   * grant (monotonic ms, this coordinator's observation).
   */
  shardGranted?(event: {
    election: string;
    shard: number;
    owner: string;
    from: string | undefined;
    token: number;
    unownedMs: number | undefined;
  }): void;
}
